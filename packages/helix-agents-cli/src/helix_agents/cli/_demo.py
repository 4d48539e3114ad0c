"""``demo``: a small session in a store, to try the other commands on: rows, a delivered
context row, a tool call whose result is offloaded, a compaction, two checkpoints and a
pending approval (docs/cli.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    MessageCommit,
    PendingApproval,
    StartRun,
    StateStoreError,
    StoredContextItem,
    open_store,
)
from helix_agents.core.backend import redact_url
from helix_agents.core.context import Compaction, ContextStore, offload_summary

from ._render import out_console

__all__ = [
    "DEMO_SESSION",
    "DEMO_SUMMARY",
    "DEMO_USER",
    "TIMETABLE_MATCH",
    "timetable",
    "write_demo",
]

DEMO_USER = "demo-user"
DEMO_SESSION = "demo-trip"
DEMO_SUMMARY = "The user wants Lyon on Friday; the 9:04 TGV was proposed."
TIMETABLE_MATCH = "TER 17305"


def timetable() -> str:
    """The offloaded tool output: 300 lines of trains, line 124 the cheap TER."""
    lines = [f"{6 + i // 30:02}:{i % 60:02} TGV {6600 + i} Paris → Lyon 89 EUR" for i in range(300)]
    lines[123] = f"07:02 {TIMETABLE_MATCH} Paris-Bercy → Lyon Part-Dieu 29 EUR"
    return "\n".join(lines) + "\n"


async def write_demo(url: str) -> str:
    """Create (or re-create) the demo session in the store at ``url`` and say what to try;
    the id of its offloaded output."""
    now = datetime.now(UTC)
    async with open_store(url) as store:
        if not isinstance(store, ContextStore):
            raise StateStoreError(f"{type(store).__name__} does not store tool outputs")
        await store.delete_session(DEMO_SESSION)
        await store.create_session(DEMO_SESSION, user_id=DEMO_USER, metadata={"city": "Lyon"})
        await store.set_session_title(DEMO_SESSION, "Trip to Lyon")
        memory = ContextItem(kind="memory", content="prefers trains", memory_ids=["m-1"])
        await store.record_context_item(
            DEMO_SESSION, StoredContextItem(key="memory:m-1", item=memory, at=now)
        )
        await store.append_messages(
            DEMO_SESSION,
            MessageCommit(
                start_run=StartRun(run_id="run-1"),
                messages=(
                    ChatMessage(role="user", content="Book me a trip to Lyon on Friday."),
                    memory.to_message(),
                    ChatMessage(role="assistant", content="The 9:04 TGV arrives at 11:00."),
                ),
                deliver_context_items=(ContextItemDelivery(key="memory:m-1", row_offset=1),),
            ),
        )
        await store.save_checkpoint(
            DEMO_SESSION,
            Checkpoint(
                checkpoint_id="cp-1",
                run_id="run-1",
                message_count=3,
                state={"step": "book"},
                created_at=now,
            ),
        )
        # a tool call whose long result is offloaded, its row a summary naming the output
        ref = await store.store_output(DEMO_SESSION, timetable(), tool_name="search_trains")
        search = {"name": "search_trains", "arguments": '{"to": "Lyon", "day": "Friday"}'}
        book = {"name": "book_train", "arguments": '{"train": "TGV 9:04"}'}
        await store.append_messages(
            DEMO_SESSION,
            MessageCommit(
                messages=(
                    ChatMessage(role="user", content="Is there a cheaper train?"),
                    ChatMessage(
                        role="assistant",
                        content=None,
                        tool_calls=[{"id": "call-7", "type": "function", "function": search}],
                    ),
                    ChatMessage(
                        role="tool",
                        content=offload_summary(ref),
                        tool_call_id="call-7",
                        name="search_trains",
                    ),
                    ChatMessage(role="assistant", content="The 7:02 TER costs 29 EUR."),
                    # the call the approval holds back
                    ChatMessage(
                        role="assistant",
                        content=None,
                        tool_calls=[{"id": "call-1", "type": "function", "function": book}],
                    ),
                ),
            ),
        )
        # the window starts at the second question; the first exchange is summarised
        await store.record_compaction(DEMO_SESSION, Compaction(boundary=3, summary=DEMO_SUMMARY))
        await store.save_checkpoint(
            DEMO_SESSION,
            Checkpoint(
                checkpoint_id="cp-2",
                run_id="run-1",
                message_count=8,
                state={"step": "compare", "options": ["TGV 9:04", "TER 7:02"]},
                created_at=now,
            ),
        )
        await store.add_pending_approvals(
            DEMO_SESSION,
            [
                PendingApproval(
                    approval_id="ap-1",
                    tool_name="book_train",
                    tool_call_id="call-1",
                    input={"train": "TGV 9:04"},
                    requested_at=now,
                )
            ],
        )
        await store.finish_run(DEMO_SESSION, "run-1", "awaiting_approval")
    shown = redact_url(url)
    console = out_console()
    console.print(f"wrote session {DEMO_SESSION!r} of user {DEMO_USER!r}; now try:", soft_wrap=True)
    for command in (
        f"sessions {shown} --user {DEMO_USER}",
        f"show {shown} {DEMO_SESSION}",
        f"stats {shown} --user {DEMO_USER}",
        f"export {shown} {DEMO_SESSION} > demo.jsonl",
        f"serve {shown}",
    ):
        console.print(f"  helix-store {command}", markup=False, soft_wrap=True)
    return ref.output_id
