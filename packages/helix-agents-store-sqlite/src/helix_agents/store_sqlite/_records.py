"""Insert-once records and approvals, each run inside one write transaction.

The checks come in the reference store's order: the session exists, the input
is well formed, the fence holds. A repeat (``recorded=False``) is not a write
and leaves ``last_activity_at`` alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from helix_agents.core import (
    Checkpoint,
    LateAnswer,
    PendingApproval,
    RecordResult,
    StoredContextItem,
)
from helix_agents.core.backend import (
    assert_fence,
    check_checkpoint_count,
    check_id,
    coerce,
    coerce_all,
)
from helix_agents.core.errors import approval_not_found
from helix_agents.core.models import ApprovalResolution

from ._rows import Clock, SessionRow, dump_model, load_session, to_us, touch

__all__ = ["add_approvals", "record_item", "record_late", "resolve", "save_checkpoint"]


def _record_once(
    db: sqlite3.Connection,
    row: SessionRow,
    table: str,
    column: str,
    key: str,
    body: str,
    clock: Clock,
) -> RecordResult:
    cursor = db.execute(
        f"INSERT INTO {table} (session_id, {column}, delivered_index, body) "
        f"VALUES (?, ?, NULL, ?) ON CONFLICT DO NOTHING",
        (row.id, key, body),
    )
    if cursor.rowcount == 0:
        return RecordResult(recorded=False)
    touch(db, row, clock)
    return RecordResult(recorded=True)


def record_item(
    db: sqlite3.Connection, sid: str, raw: Any, fence_run_id: str | None, clock: Clock
) -> RecordResult:
    """Queue a context item once per key (CI-1, CI-3)."""
    row = load_session(db, sid)
    record = coerce(StoredContextItem, raw, sid)
    assert_fence(sid, fence_run_id, row.current_run)
    return _record_once(
        db, row, "__agents_context_items", "item_key", record.key, dump_model(record), clock
    )


def record_late(
    db: sqlite3.Connection, sid: str, raw: Any, fence_run_id: str | None, clock: Clock
) -> RecordResult:
    """Queue a late answer once per call id (LA-1, LA-3)."""
    row = load_session(db, sid)
    answer = coerce(LateAnswer, raw, sid)
    assert_fence(sid, fence_run_id, row.current_run)
    return _record_once(
        db, row, "__agents_late_answers", "call_id", answer.call_id, dump_model(answer), clock
    )


def add_approvals(
    db: sqlite3.Connection, sid: str, raw: Sequence[Any], fence_run_id: str | None, clock: Clock
) -> None:
    """Add approvals once per id; a resolved id stays resolved (APR-1)."""
    row = load_session(db, sid)
    checked = coerce_all(PendingApproval, raw, sid, "approvals")
    assert_fence(sid, fence_run_id, row.current_run)
    added = 0
    for approval in checked:
        added += db.execute(
            "INSERT INTO __agents_approvals (session_id, approval_id, resolved, body) "
            "VALUES (?, ?, 0, ?) ON CONFLICT DO NOTHING",
            (sid, approval.approval_id, dump_model(approval)),
        ).rowcount
    if added:
        touch(db, row, clock)


def resolve(db: sqlite3.Connection, sid: str, approval_id: str, clock: Clock) -> ApprovalResolution:
    """``resolved`` for the first caller, ``already-resolved`` after (APR-2)."""
    row = load_session(db, sid)
    check_id(approval_id, "approval_id", session_id=sid)
    found = db.execute(
        "SELECT resolved FROM __agents_approvals WHERE session_id = ? AND approval_id = ?",
        (sid, approval_id),
    ).fetchone()
    if found is None:
        raise approval_not_found(sid, approval_id)
    if found[0]:
        return "already-resolved"
    db.execute(
        "UPDATE __agents_approvals SET resolved = 1 WHERE session_id = ? AND approval_id = ?",
        (sid, approval_id),
    )
    touch(db, row, clock)
    return "resolved"


def save_checkpoint(
    db: sqlite3.Connection, sid: str, raw: Any, fence_run_id: str | None, clock: Clock
) -> RecordResult:
    """Save a checkpoint once per id (CKP-1, CKP-2)."""
    row = load_session(db, sid)
    checkpoint = coerce(Checkpoint, raw, sid)
    check_checkpoint_count(
        sid, checkpoint.checkpoint_id, checkpoint.message_count, row.message_count
    )
    assert_fence(sid, fence_run_id, row.current_run)
    cursor = db.execute(
        "INSERT INTO __agents_checkpoints "
        "(session_id, checkpoint_id, message_count, created_us, body) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (
            sid,
            checkpoint.checkpoint_id,
            checkpoint.message_count,
            to_us(checkpoint.created_at),
            dump_model(checkpoint),
        ),
    )
    if cursor.rowcount == 0:
        return RecordResult(recorded=False)
    touch(db, row, clock)
    return RecordResult(recorded=True)
