"""A scripted agent loop on a SQLite session store: each capability, one step at a time.

Run it with ``make demo`` (or ``uv run python examples/agent_loop.py``). It
needs no network and no model: ``scripted_model`` stands in for one and answers
the same way every time. Everything lands in ``./helix-demo.db``; run it again
and the user's second trip joins the first in the session listing.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

from helix_agents.core import (
    ChatMessage,
    ContextItem,
    ContextMessage,
    LateAnswer,
    Message,
    MessageCommit,
    MessageCountConflictError,
    PendingApproval,
    RunSupersededError,
    SessionStateStore,
    StartRun,
    StoredContextItem,
    deliver_context_items,
    deliver_late_answer_notices,
    open_store,
)

STORE_URL = "sqlite:///helix-demo.db"
USER = "ada"
AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)  # fixed times keep the output the same


def step(title: str) -> None:
    print(f"\n== {title}")


def say(text: str) -> None:
    print(f"   {text}")


def describe(row: Message) -> str:
    if isinstance(row, ContextMessage):
        return f"(hidden {row.kind}) {row.content}"
    calls = (row.model_extra or {}).get("tool_calls")
    if calls:
        return "assistant calls " + ", ".join(call["function"]["name"] for call in calls)
    return f"{row.role}: {row.content}"


def scripted_model(rows: list[Message]) -> ChatMessage:
    """The stand-in for a model: answers the last user or tool row from a script."""
    last = [row for row in rows if isinstance(row, ChatMessage)][-1]
    if last.role == "user" and "weather" in str(last.content):
        return tool_call("call-weather", "get_forecast", '{"city": "Lyon"}')
    if last.role == "user" and "train" in str(last.content):
        return tool_call("call-train", "book_train", '{"to": "Lyon", "day": "Saturday"}')
    return ChatMessage(
        role="assistant",
        content="Booked: Saturday 08:04 to Lyon. The late forecast says sunny, 24°C. Enjoy!",
    )


def tool_call(call_id: str, name: str, arguments: str) -> ChatMessage:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return ChatMessage(role="assistant", content=None, tool_calls=[call])


async def append(store: SessionStateStore, sid: str, run_id: str, *rows: Message) -> int:
    """Append ``rows`` for ``run_id``, expecting the count we just read; return the new count."""
    count = await store.get_message_count(sid)
    commit = MessageCommit(messages=rows, expect_message_count=count, fence_run_id=run_id)
    result = await store.append_messages(sid, commit)
    for offset, row in enumerate(rows):
        say(f"+ row {result.first_index + offset}: {describe(row)}")
    return result.message_count


async def main() -> None:
    async with open_store(STORE_URL) as store:
        trips = (await store.list_sessions(USER, first=500)).sessions
        sid = f"trip-{len(trips) + 1}"
        await store.create_session(sid, user_id=USER)
        await store.set_session_title(sid, "Weekend in Lyon")
        print(f"Store: {STORE_URL}   session: {sid}   user: {USER}")

        step("1. A run starts with the user's question")
        question = ChatMessage(role="user", content="What's the weather in Lyon on Saturday?")
        first = await store.append_messages(
            sid, MessageCommit(messages=(question,), start_run=StartRun(run_id="run-1"))
        )
        say(f"+ row 0: {describe(question)}")
        say(f"run-1 is live; the log holds {first.message_count} row")

        step("2. The model calls a tool; rows land only on the count we read")
        rows = await store.get_messages(sid)
        count = await append(store, sid, "run-1", scripted_model(rows))
        say(f"the log now holds {count} rows")
        stale = MessageCommit(messages=(question,), expect_message_count=count - 1)
        try:
            await store.append_messages(sid, stale)
        except MessageCountConflictError as err:
            say(f"a writer that read an older count is refused: {err.code}")

        step("3. The user asks again before the tool answers: run-2 supersedes run-1")
        again = ChatMessage(role="user", content="Also, find me a train for Saturday.")
        await store.append_messages(
            sid, MessageCommit(messages=(again,), start_run=StartRun(run_id="run-2"))
        )
        say(f"+ row {count}: {describe(again)}")
        answer = ChatMessage(role="tool", content="sunny, 24°C", tool_call_id="call-weather")
        try:
            await store.append_messages(
                sid, MessageCommit(messages=(answer,), fence_run_id="run-1")
            )
        except RunSupersededError as err:
            say(f"run-1's late tool answer is fenced out: {err.code}")

        step("4. The late answer is queued, then delivered to run-2 as a notice")
        late = LateAnswer(
            call_id="call-weather", tool_name="get_forecast", output="sunny, 24°C", at=AT
        )
        await store.record_late_answer(sid, late)
        queued = await store.list_undelivered_late_answers(sid)
        say(f"queued late answers: {[a.call_id for a in queued]}")
        for row in await deliver_late_answer_notices(store, sid, fence_run_id="run-2"):
            say(f"+ {describe(row)}")
        say(f"still queued: {len(await store.list_undelivered_late_answers(sid))}")

        step("5. A context item is recorded once and delivered exactly once")
        memory = StoredContextItem(
            key="pref:units",
            item=ContextItem(kind="memory", content="Ada prefers Celsius.", memory_ids=["m1"]),
            at=AT,
        )
        say(f"record: recorded={(await store.record_context_item(sid, memory)).recorded}")
        say(f"record again: recorded={(await store.record_context_item(sid, memory)).recorded}")
        for row in await deliver_context_items(store, sid, fence_run_id="run-2"):
            say(f"+ {describe(row)}")
        again_rows = await deliver_context_items(store, sid, fence_run_id="run-2")
        say(f"delivering again adds {len(again_rows)} rows")

        step("6. Booking needs a person's approval: the run pauses, then resumes")
        rows = await store.get_messages(sid)
        await append(store, sid, "run-2", scripted_model(rows))
        booking = PendingApproval(
            approval_id="approve-train",
            tool_name="book_train",
            tool_call_id="call-train",
            input={"to": "Lyon", "day": "Saturday"},
            requested_at=AT,
        )
        await store.add_pending_approvals(sid, [booking], fence_run_id="run-2")
        await store.finish_run(sid, "run-2", "awaiting_approval")
        pending = [a.approval_id for a in await store.list_pending_approvals(sid)]
        say(f"run-2 is awaiting_approval; pending: {pending}")
        say(f"Ada approves: {await store.resolve_approval(sid, 'approve-train')}")
        say(f"a second click: {await store.resolve_approval(sid, 'approve-train')}")
        await store.append_messages(sid, MessageCommit(start_run=StartRun(run_id="run-3")))
        say("run-3 starts to carry out the approved booking")
        done = ChatMessage(role="tool", content="ticket #A42", tool_call_id="call-train")
        count = await append(store, sid, "run-3", done)
        rows = await store.get_messages(sid)
        count = await append(store, sid, "run-3", scripted_model(rows))
        await store.finish_run(sid, "run-3", "completed")
        say("run-3 completed")

        step("7. A page of history, newest first")
        page = await store.page_messages(sid, limit=4, order="desc")
        for row in page.messages:
            say(describe(row))
        ui_count = await store.get_ui_message_count(sid)
        say(f"{count} rows in all; {ui_count} shown to Ada (hidden context rows skipped)")
        say(f"more pages: {page.next_cursor is not None}")

        step(f"8. {USER}'s sessions, most recent first")
        for summary in (await store.list_sessions(USER)).sessions:
            say(
                f"{summary.id}: {summary.message_count} rows, "
                f"{summary.pending_approvals} pending approvals"
            )
    print_next_commands(sid)


def print_next_commands(sid: str) -> None:
    """The commands to try next, quoted for a shell in the directory the demo ran in."""
    here = Path.cwd()
    cli = Path(sys.executable).parent / "helix-store"  # beside the venv's python
    if cli.is_relative_to(here):
        cli = cli.relative_to(here)
    root = Path(__file__).resolve().parents[1]
    make = ["make"] if root == here.resolve() else ["make", "-C", str(root)]
    db = STORE_URL.removeprefix("sqlite:///")
    print("\nDone. Next, copy and paste any of these:")
    for command in (
        shlex.join([str(cli), "sessions", STORE_URL, "--user", USER]),
        shlex.join([str(cli), "show", STORE_URL, sid]),
        shlex.join([str(cli), "stats", STORE_URL, "--user", USER]),
        shlex.join([str(cli), "export", STORE_URL, sid]) + f" > {shlex.quote(sid + '.jsonl')}",
        shlex.join([*make, "long-run"]),
        shlex.join([*make, "test"]),
        f"rm {shlex.quote(db)}*",
    ):
        print(f"    {command}")
    print("Run the demo again to add another trip; the last command starts over.")


if __name__ == "__main__":
    asyncio.run(main())
