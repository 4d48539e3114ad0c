"""A long agent run on SQLite under the context strategies, printing each step.

Run it with ``make long-run`` (or ``uv run python examples/long_run.py [DB]``).
It needs no network and no model: a script stands in for both. It fills the
window turn by turn, offloads a 40,000-character test log and greps it back,
compacts twice, recalls a detail from before the first compaction (which
retention has moved to the archive by then), and activates a tool source —
then reopens the store and replays the activation from the history.
See docs/context-strategies.md.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from helix_agents.core import ChatMessage, ContextMessage, Message, MessageCommit
from helix_agents.core.context import (
    ACTIVATE_TOOL,
    Budget,
    Compaction,
    ContextStrategy,
    EstimateCounter,
    ToolCatalog,
    ToolSource,
    activate_tool_source,
    features,
    find_compaction_boundary,
    offload_output,
    read_tool_output,
    recall_history,
    resolve_strategy,
)
from helix_agents.store_sqlite import SQLiteStateStore

DB = Path(sys.argv[1] if len(sys.argv) > 1 else "helix-long-run.db")
# A small window and a tokenizer-free counter, so the run is short and prints the same.
BUDGET = Budget(context_window=6_000, offload_tokens=1_000, counter=EstimateCounter())
MAX_TURNS = 40  # a bound on the scripted loop, far above what the steps need
RETAIN = 40  # the store keeps the newest 40 rows; preserved history archives the rest
CATALOG = ToolCatalog(
    [
        ToolSource("shell", "builtin", ("run_tests", "read_file")),
        ToolSource(
            "github",
            "mcp",
            ("list_repos", "create_issue", "search_code", "get_pr", "merge_pr", "list_branches"),
        ),
        ToolSource("math", "code", ("calculate", "convert_units")),
    ]
)


def step(title: str) -> None:
    print(f"\n== {title}")


def say(text: str) -> None:
    for line in text.splitlines() or [""]:
        print(f"   {line}")


def call(call_id: str, name: str, arguments: str) -> ChatMessage:
    function = {"name": name, "arguments": arguments}
    return ChatMessage(
        role="assistant",
        content=None,
        tool_calls=[{"id": call_id, "type": "function", "function": function}],
    )


def result(call_id: str, name: str, text: str) -> ChatMessage:
    return ChatMessage(role="tool", content=text, tool_call_id=call_id, name=name)


def test_log() -> str:
    """40,000 characters of passing tests with one failure in the middle."""
    lines = [f"tests/test_module_{i:04}.py::test_case PASSED" for i in range(1, 900)]
    lines[611] = "tests/test_module_0612.py::test_refund FAILED - assert 40 == 42 (rounding)"
    text = "\n".join(lines) + "\n"
    return (text * 2)[:40_000]


def turn(n: int) -> list[Message]:
    """One scripted exchange: a question, a tool call, its result, an answer."""
    topic = f"module {n}"
    return [
        ChatMessage(role="user", content=f"Review {topic} and list anything suspicious in it."),
        call(f"c{n}", "read_file", f'{{"path": "src/module_{n}.py"}}'),
        result(f"c{n}", "read_file", "\n".join(f"line {k}: code of {topic}" for k in range(80))),
        ChatMessage(role="assistant", content=f"{topic.capitalize()} looks fine; no issue."),
    ]


def summarise(rows: list[Message]) -> str:
    """The stand-in for a model's summary of the rows leaving the window."""
    users = sum(isinstance(r, ChatMessage) and r.role == "user" for r in rows)
    tools = sum(isinstance(r, ChatMessage) and r.role == "tool" for r in rows)
    return f"Earlier: {users} review requests and {tools} tool results; all modules fine."


async def append(store: SQLiteStateStore, sid: str, rows: list[Message]) -> None:
    await store.append_messages(sid, MessageCommit(messages=tuple(rows)))


async def compact_if_needed(store: SQLiteStateStore, sid: str, strategy: ContextStrategy) -> bool:
    window = await store.get_window(sid)
    rows = ([window.summary] if window.summary else []) + list(window.messages)
    usage = BUDGET.measure(rows)
    say(f"window: {usage.tokens:,} of {usage.limit:,} tokens ({usage.level})")
    if usage.level != "compact":
        return False
    cut = find_compaction_boundary(list(window.messages), keep_last=4)
    if not cut.index:
        say(f"no safe cut: {cut.reason}")
        return False
    leaving = list(window.messages[: cut.index])
    done = await store.record_compaction(
        sid,
        Compaction(
            boundary=window.start + cut.index,
            summary=summarise(leaving),
            strategy=strategy,
            expect_window_start=window.start,
        ),
    )
    say(
        f"compaction {done.compactions}: rows {window.start}..{done.window_start - 1} leave "
        f"the window (history preserved: {done.preserved})"
    )
    return True


async def main() -> None:
    step("Resolve the strategy: the agent says 'Dynamic', the model says nothing")
    strategy = resolve_strategy("Dynamic", None)
    on = features(strategy)
    say(
        f"strategy {strategy}: offload={on.offload_outputs}, preserve={on.preserve_history}, "
        f"lazy tools={on.lazy_tools}; budget limit {BUDGET.limit:,} tokens"
    )

    async with SQLiteStateStore(DB, max_messages=RETAIN) as store:
        sid = (await store.create_session(user_id="ada")).id
        say(f"session {sid} in {DB}")

        step("Turn 0: the user mentions a detail that matters much later")
        await append(
            store,
            sid,
            [
                ChatMessage(role="user", content="Note: the staging deploy token is XK-4471."),
                ChatMessage(role="assistant", content="Noted."),
            ],
        )

        step("Fill the window, turn by turn")
        compactions = 0
        n = 0
        while compactions < 1 and n < MAX_TURNS:
            n += 1
            await append(store, sid, turn(n))
            compactions += await compact_if_needed(store, sid, strategy)

        step("Offload a 40,000-character test log and grep it back")
        log = test_log()
        text = await offload_output(store, sid, log, budget=BUDGET, tool_name="run_tests")
        say("\n".join([*text.splitlines()[:3], "...", *text.splitlines()[-3:]]))
        output_id = text.split()[3]
        await append(store, sid, [call("ct", "run_tests", "{}"), result("ct", "run_tests", text)])
        found = await read_tool_output(store, sid, output_id, grep=r"FAILED", context_lines=1)
        say(found)

        step("Keep working until the window needs a second compaction")
        while compactions < 2 and n < MAX_TURNS:
            n += 1
            await append(store, sid, turn(n))
            compactions += await compact_if_needed(store, sid, strategy)
        count = await store.get_message_count(sid)
        window = await store.get_window(sid)
        say(f"{count} rows in all; the window starts at row {window.start}")
        say(f"retention keeps rows {count - RETAIN}..{count - 1}; older ones are archived")

        step("Recall a detail from before the first compaction")
        say(await recall_history(store, sid, grep=r"deploy token is \S+"))

        step("Lazy tools: the catalog, a wrong activation, a right one")
        history = await store.get_messages(sid)
        active = CATALOG.active_from_history(history)
        say(CATALOG.catalog_block(active))
        tool = CATALOG.activation_tool(active)
        assert tool is not None
        enum = tool["parameters"]["properties"]["source_name"]["enum"]  # type: ignore[call-overload,index]
        say(f"{ACTIVATE_TOOL} accepts {enum}")
        say(await activate_tool_source(store, sid, CATALOG, "gitlab"))
        say(await activate_tool_source(store, sid, CATALOG, "github"))

    step("Restart: reopen the store and replay the activations from the history")
    async with SQLiteStateStore(DB, max_messages=RETAIN) as store:
        history = await store.get_messages(sid)
        active = CATALOG.active_from_history(history)
        rows = [r for r in history if isinstance(r, ContextMessage) and r.kind == "tools"]
        say(f"tools rows in the log: {len(rows)}; active sources: {active}")
        say(f"tools the model sees: {', '.join(CATALOG.visible_tools(active))}")


if __name__ == "__main__":
    asyncio.run(main())
