"""The demo session's facts the inspector's tests look for (``helix-store demo`` writes
it), and a session of hostile content."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from helix_agents.cli._demo import DEMO_SUMMARY as SUMMARY
from helix_agents.cli._demo import TIMETABLE_MATCH
from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StoredContextItem,
    open_store,
)
from helix_agents.core.context import ContextStore

__all__ = ["HOSTILE", "SUMMARY", "TIMETABLE_MATCH", "hostile", "options"]

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


def options(url: str) -> dict[str, Any]:
    """The open options a test store needs: a fresh Postgres schema is migrated."""
    return {"auto_migrate": True} if url.startswith("postgres") else {}


async def hostile(url: str) -> None:
    """A session whose id, user, metadata, rows, tool names and records hold markup: queued
    and delivered, pending and resolved, and an output."""
    now = datetime.now(UTC)
    async with open_store(url, **options(url)) as store:
        sid = f"s{HOSTILE}"
        await store.create_session(sid, user_id=f"u{HOSTILE}", metadata={HOSTILE: HOSTILE})
        call = {"name": f"t{HOSTILE}", "arguments": HOSTILE}
        await store.append_messages(
            sid,
            MessageCommit(
                messages=(
                    ChatMessage(role="user", content=HOSTILE),
                    ContextItem(kind="notice", content=HOSTILE).to_message(),
                    ChatMessage(
                        role="assistant",
                        content=HOSTILE,
                        tool_calls=[{"id": HOSTILE, "type": "function", "function": call}],
                    ),
                    ChatMessage(role="tool", content=HOSTILE, tool_call_id=HOSTILE, name=HOSTILE),
                )
            ),
        )
        await store.add_pending_approvals(
            sid,
            [
                PendingApproval(
                    approval_id="ap-x",
                    tool_name=HOSTILE,
                    tool_call_id=HOSTILE,
                    input={HOSTILE: HOSTILE},
                    requested_at=now,
                )
            ],
        )
        await store.record_context_item(
            sid,
            StoredContextItem(key="k", item=ContextItem(kind="notice", content=HOSTILE), at=now),
        )
        await store.record_late_answer(
            sid, LateAnswer(call_id="c", tool_name=HOSTILE, output=HOSTILE, at=now)
        )
        # delivered and resolved ones, listed from the session's dump (INS-15, INS-16)
        delivered = ContextItem(kind="notice", content=HOSTILE)
        await store.record_context_item(
            sid, StoredContextItem(key=f"d{HOSTILE}", item=delivered, at=now)
        )
        await store.append_messages(
            sid,
            MessageCommit(
                messages=(delivered.to_message(),),
                deliver_context_items=(ContextItemDelivery(key=f"d{HOSTILE}", row_offset=0),),
            ),
        )
        resolved = PendingApproval(
            approval_id=f"a{HOSTILE}",
            tool_name=HOSTILE,
            tool_call_id="c2",
            input={},
            requested_at=now,
        )
        await store.add_pending_approvals(sid, [resolved])
        await store.resolve_approval(sid, f"a{HOSTILE}")
        assert isinstance(store, ContextStore)
        await store.store_output(sid, f"{HOSTILE}\n", tool_name=f"t{HOSTILE}")  # INS-17
        await store.save_checkpoint(
            sid,
            Checkpoint(
                checkpoint_id="cp",
                run_id="r",
                message_count=4,
                state={HOSTILE: HOSTILE},
                created_at=now,
            ),
        )
