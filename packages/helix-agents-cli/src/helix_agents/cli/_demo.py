"""``demo``: a small session in a store, to try the other commands on."""

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
    StoredContextItem,
    open_store,
)
from helix_agents.core.backend import redact_url

from ._render import out_console

__all__ = ["DEMO_SESSION", "DEMO_USER", "write_demo"]

DEMO_USER = "demo-user"
DEMO_SESSION = "demo-trip"


async def write_demo(url: str) -> None:
    """Create (or re-create) the demo session in the store at ``url`` and say what to try."""
    now = datetime.now(UTC)
    async with open_store(url) as store:
        await store.delete_session(DEMO_SESSION)
        await store.create_session(DEMO_SESSION, user_id=DEMO_USER, metadata={"title": "Lyon"})
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
    ):
        console.print(f"  helix-store {command}", markup=False, soft_wrap=True)
