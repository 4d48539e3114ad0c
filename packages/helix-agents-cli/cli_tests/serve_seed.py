"""What the inspector's tests add to the demo session (``helix-store demo``): a tool call
and its offloaded result, a compaction, a second checkpoint; and a session of hostile
content."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StoredContextItem,
    open_store,
)
from helix_agents.core.context import Compaction, ContextStore, offload_summary

DEMO = "demo-trip"
SUMMARY = "The user wants Lyon on Friday; the 9:04 TGV was proposed."
TIMETABLE_MATCH = "TER 17305"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"


def options(url: str) -> dict[str, Any]:
    """The open options a test store needs: a fresh Postgres schema is migrated."""
    return {"auto_migrate": True} if url.startswith("postgres") else {}


def timetable() -> str:
    """300 lines of trains, one of them the cheap TER the grep finds."""
    lines = [f"{6 + i // 30:02}:{i % 60:02} TGV {6600 + i} Paris → Lyon 89 EUR" for i in range(300)]
    lines[123] = f"07:02 {TIMETABLE_MATCH} Paris-Bercy → Lyon Part-Dieu 29 EUR"
    return "\n".join(lines) + "\n"


async def enrich_demo(url: str) -> str:
    """Add to the demo session a call whose result is offloaded, the call its approval
    holds back, a compaction at row 3 and a second checkpoint; the output's id."""
    async with open_store(url, **options(url)) as store:
        assert isinstance(store, ContextStore)
        ref = await store.store_output(DEMO, timetable(), tool_name="search_trains")
        call = {"name": "search_trains", "arguments": '{"to": "Lyon", "day": "Friday"}'}
        # the call the demo's approval ap-1 (tool call call-1) holds back
        book = {"name": "book_train", "arguments": '{"train": "TGV 9:04"}'}
        await store.append_messages(
            DEMO,
            MessageCommit(
                messages=(
                    ChatMessage(role="user", content="Is there a cheaper train?"),
                    ChatMessage(
                        role="assistant",
                        content=None,
                        tool_calls=[{"id": "call-7", "type": "function", "function": call}],
                    ),
                    ChatMessage(
                        role="tool",
                        content=offload_summary(ref),
                        tool_call_id="call-7",
                        name="search_trains",
                    ),
                    ChatMessage(role="assistant", content="The 7:02 TER costs 29 EUR."),
                    ChatMessage(
                        role="assistant",
                        content=None,
                        tool_calls=[{"id": "call-1", "type": "function", "function": book}],
                    ),
                )
            ),
        )
        await store.record_compaction(DEMO, Compaction(boundary=3, summary=SUMMARY))
        await store.save_checkpoint(
            DEMO,
            Checkpoint(
                checkpoint_id="cp-2",
                run_id="run-1",
                message_count=8,
                state={"step": "compare", "options": ["TGV 9:04", "TER 7:02"]},
                created_at=datetime.now(UTC),
            ),
        )
        return ref.output_id


async def hostile(url: str) -> None:
    """A session whose id, user, metadata, rows, tool names and records hold markup."""
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
