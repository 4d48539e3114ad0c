"""What the encryption rules and each backend's scan share (docs/encryption.md, ENC-1,
ENC-2): a session holding one known text in every record a session can hold."""

from __future__ import annotations

from datetime import UTC, datetime

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextMessage,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    ScopedStateDelta,
    SessionStateStore,
    StoredContextItem,
)
from helix_agents.core.context import Compaction, ContextStore

__all__ = ["PLAIN", "RETAIN", "check_plain_records", "write_plain_records"]

PLAIN = "plain-text-5e1d9a"
"""The text each record holds; an encrypted store's storage must not (ENC-2)."""
RETAIN = 6
"""The ``max_messages`` a store must be opened with so that retention archives rows."""
_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _rows(tag: str) -> tuple[ChatMessage | ContextMessage, ...]:
    return (
        ChatMessage(role="user", content=f"my {tag} is {PLAIN}", id=f"row-{tag}"),
        ChatMessage(role="user", content=[{"type": "text", "text": PLAIN}]),
        ChatMessage(
            role="assistant",
            content=None,
            tool_calls=[{"id": f"c-{tag}", "function": {"name": "f", "arguments": PLAIN}}],
        ),
        ChatMessage(role="tool", content=f"found {PLAIN}", tool_call_id=f"c-{tag}", name="f"),
        ContextMessage(kind="memory", content=PLAIN, memory_ids=[PLAIN]),
    )


async def write_plain_records(store: SessionStateStore, session_id: str) -> str:
    """Create ``session_id`` on ``store`` (opened with ``max_messages=RETAIN``) and write
    :data:`PLAIN` into its rows, a redaction's replacement, an output (text, previews and
    tool name), a checkpoint's state, a queued context item, a late answer, a pending
    approval, its session map, a compaction summary and archived rows; the output's id."""
    assert isinstance(store, ContextStore)
    await store.create_session(session_id, user_id="scan-user", metadata={"k": "v"})
    scoped = ScopedStateDelta(scope="session", changes={"note": PLAIN})
    await store.append_messages(
        session_id, MessageCommit(messages=_rows("first"), scoped_state=(scoped,))
    )
    await store.redact_message(session_id, 0, reason="test", replacement=f"was {PLAIN}")
    ref = await store.store_output(session_id, f"one\n{PLAIN}\nthree\n", tool_name=f"t-{PLAIN}")
    await store.save_checkpoint(
        session_id,
        Checkpoint(
            checkpoint_id="cp", run_id="r", message_count=5, state={"m": PLAIN}, created_at=_AT
        ),
    )
    item = ContextItem(kind="instruction", content=PLAIN)
    await store.record_context_item(session_id, StoredContextItem(key="i", item=item, at=_AT))
    late = LateAnswer(call_id="late", tool_name=f"t-{PLAIN}", output={"o": PLAIN}, at=_AT)
    await store.record_late_answer(session_id, late)
    approval = PendingApproval(
        approval_id="a",
        tool_name=f"t-{PLAIN}",
        tool_call_id="c-a",
        input={"x": PLAIN},
        requested_at=_AT,
    )
    await store.add_pending_approvals(session_id, [approval])
    await store.record_compaction(session_id, Compaction(boundary=4, summary=f"s {PLAIN}"))
    # Past RETAIN rows, preserved history moves to the archive.
    await store.append_messages(session_id, MessageCommit(messages=_rows("second")))
    return ref.output_id


async def check_plain_records(store: SessionStateStore, session_id: str, output_id: str) -> None:
    """Every record :func:`write_plain_records` wrote reads back as written, and history
    search and grep find :data:`PLAIN` (ENC-1)."""
    assert isinstance(store, ContextStore)
    rows = await store.get_messages(session_id)
    assert rows[-5:] == list(_rows("second"))
    assert len(rows) == RETAIN
    found = await store.search_history(session_id, grep=PLAIN, limit=100)
    assert {hit.archived for hit in found.hits} == {True, False}
    assert any(hit.line == f"was {PLAIN}" and hit.index == 0 for hit in found.hits)
    assert any(hit.line == f"found {PLAIN}" and hit.archived for hit in found.hits)
    grep = await store.grep_output(session_id, output_id, PLAIN, context_lines=0)
    assert [(line.number, line.text) for line in grep.lines] == [(2, PLAIN)]
    ref = await store.get_output(session_id, output_id)
    assert ref.tool_name == f"t-{PLAIN}" and PLAIN in [line.text for line in ref.head]
    read = await store.read_output(session_id, output_id)
    assert [line.text for line in read.lines] == ["one", PLAIN, "three"]
    checkpoint = await store.get_checkpoint(session_id, "cp")
    assert checkpoint is not None and checkpoint.state == {"m": PLAIN}
    items = await store.list_undelivered_context_items(session_id)
    assert [i.item for i in items] == [ContextItem(kind="instruction", content=PLAIN)]
    late = await store.list_undelivered_late_answers(session_id)
    assert [(a.tool_name, a.output) for a in late] == [(f"t-{PLAIN}", {"o": PLAIN})]
    approvals = await store.list_pending_approvals(session_id)
    assert [(a.tool_name, a.input) for a in approvals] == [(f"t-{PLAIN}", {"x": PLAIN})]
    assert await store.get_scoped_state("session", session_id) == {"note": PLAIN}
    window = await store.get_window(session_id)
    assert window.summary is not None and window.summary.content == f"s {PLAIN}"
