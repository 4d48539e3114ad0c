"""A store's worth of sessions that use every kind of record, written through the library."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StartRun,
    StoredContextItem,
    open_store,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def _options(url: str) -> dict[str, Any]:
    return {"auto_migrate": True} if url.startswith("postgres") else {}


async def seed(url: str) -> None:
    """Users alice (``chat``, ``quiet``) and bob (``other``), and ``orphan`` with no user."""
    async with open_store(url, **_options(url)) as store:
        await store.create_session("chat", user_id="alice", metadata={"title": "Trip", "n": 1})
        await store.record_context_item(
            "chat",
            StoredContextItem(
                key="mem-1",
                item=ContextItem(kind="memory", content="likes trains", memory_ids=["m1"]),
                at=T0,
            ),
        )
        await store.append_messages(
            "chat",
            MessageCommit(
                start_run=StartRun(run_id="run-1"),
                messages=(
                    ChatMessage(role="user", content="Plan a trip to Lyon", id="u1"),
                    ContextItem(
                        kind="memory", content="likes trains", memory_ids=["m1"]
                    ).to_message(),
                    ChatMessage(
                        role="assistant",
                        content=None,
                        tool_calls=[{"id": "c1", "name": "search", "arguments": "{}"}],
                    ),
                    ChatMessage(role="tool", content="3 trains", tool_call_id="c1"),
                    ChatMessage(role="assistant", content="Take the 9:04 TGV. ☃"),
                ),
                deliver_context_items=(ContextItemDelivery(key="mem-1", row_offset=1),),
            ),
        )
        await store.save_checkpoint(
            "chat",
            Checkpoint(
                checkpoint_id="cp-1",
                run_id="run-1",
                message_count=4,
                state={"step": 2, "x": [1, 2.5, None]},
                created_at=T0,
            ),
        )
        await store.add_pending_approvals(
            "chat",
            [
                PendingApproval(
                    approval_id="ap-1",
                    tool_name="book",
                    tool_call_id="c2",
                    input={"train": "9:04"},
                    requested_at=T0 + timedelta(seconds=1),
                )
            ],
        )
        await store.finish_run("chat", "run-1", "awaiting_approval")
        await store.record_context_item(
            "chat",
            StoredContextItem(
                key="note-1", item=ContextItem(kind="notice", content="budget 200 EUR"), at=T0
            ),
        )
        await store.record_late_answer(
            "chat",
            LateAnswer(call_id="c0", tool_name="weather", output={"c": 12}, at=T0),
        )
        await store.create_session("quiet", user_id="alice")
        await store.append_messages(
            "quiet", MessageCommit(messages=(ChatMessage(role="user", content="hi"),))
        )
        await store.create_session("other", user_id="bob")
        await store.create_session("orphan", metadata={"k": "v"})
        await store.append_messages(
            "orphan",
            MessageCommit(
                messages=tuple(ChatMessage(role="user", content=f"m{i}") for i in range(7))
            ),
        )
