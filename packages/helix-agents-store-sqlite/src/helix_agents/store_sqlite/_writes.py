"""Session-wide writes (create, delete, clear, clone, truncate, finish a run), each
run inside one write transaction, with the checks in the reference store's order.
"""

from __future__ import annotations

import sqlite3

from helix_agents.core import SessionExistsError, SessionInfo
from helix_agents.core.backend import (
    assert_fence,
    check_finish_status,
    check_id,
    check_keep,
    check_limit,
    new_session_id,
)
from helix_agents.core.models import RunStatus

from ._commit import cut_rows
from ._context import CONTEXT_TABLES
from ._rows import Clock, SessionRow, find_session, load_session, to_us, touch
from ._scoped import drop_session_map

__all__ = ["clear", "clone", "create", "delete", "finish_run", "truncate"]

_TABLES = (
    "__agents_messages",
    "__agents_context_items",
    "__agents_late_answers",
    "__agents_approvals",
    "__agents_checkpoints",
    "__agents_commits",
    *CONTEXT_TABLES,
)


def _insert_session(db: sqlite3.Connection, row: SessionRow) -> SessionInfo:
    cursor = db.execute(
        "INSERT INTO __agents_sessions (session_id, user_id, created_us, last_activity_us, "
        "metadata, message_count, first_index, ui_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id) DO NOTHING",
        (
            row.id,
            row.user_id,
            row.created_us,
            row.last_activity_us,
            row.metadata,
            row.message_count,
            row.first_index,
            row.ui_count,
        ),
    )
    if cursor.rowcount == 0:
        raise SessionExistsError(f"session {row.id!r} exists", session_id=row.id)
    return row.info()


def create(
    db: sqlite3.Connection, sid: str, user_id: str | None, metadata: str, clock: Clock
) -> SessionInfo:
    """Insert a new, empty session."""
    now = to_us(clock())
    return _insert_session(db, SessionRow(sid, user_id, now, now, metadata))


def delete(db: sqlite3.Connection, sid: str) -> bool:
    """Delete the session and everything it holds; ``True`` if it existed."""
    if find_session(db, sid) is None:
        return False
    for table in (*_TABLES, "__agents_runs", "__agents_sessions"):
        db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
    drop_session_map(db, sid)
    return True


def clear(db: sqlite3.Connection, sid: str, clock: Clock) -> None:
    """Drop rows and queues; keep the session, its user, metadata and run ids; cancel a live run."""
    row = load_session(db, sid)
    now = clock()
    for table in _TABLES:
        db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
    drop_session_map(db, sid)
    run = row.current_run
    if run is not None and run.status == "live":
        row.current_run = run.model_copy(update={"status": "cancelled", "ended_at": now})
    db.execute(
        "UPDATE __agents_sessions SET message_count = 0, first_index = 0, ui_count = 0, "
        "current_run = ? WHERE session_id = ?",
        (row.run_json, sid),
    )
    touch(db, row, clock)


def clone(
    db: sqlite3.Connection, source_id: str, target_id: str | None, up_to: int | None, clock: Clock
) -> SessionInfo:
    """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session (SES-5)."""
    src = load_session(db, source_id)
    end = src.message_count if up_to is None else up_to
    check_limit(source_id, "up_to", end, src.first_index, src.message_count)
    now = to_us(clock())
    tid = new_session_id(target_id, "target_id")
    cut_ui = db.execute(
        "SELECT count(*) FROM __agents_messages "
        "WHERE session_id = ? AND idx >= ? AND is_context = 0",
        (source_id, end),
    ).fetchone()[0]
    info = _insert_session(
        db,
        SessionRow(
            tid,
            src.user_id,
            now,
            now,
            src.metadata,
            end,
            src.first_index,
            src.ui_count - cut_ui,
            None,
        ),
    )
    db.execute(
        "INSERT INTO __agents_messages (session_id, idx, is_context, body) "
        "SELECT ?, idx, is_context, body FROM __agents_messages "
        "WHERE session_id = ? AND idx < ? ORDER BY idx",
        (tid, source_id, end),
    )
    db.execute(
        "INSERT INTO __agents_checkpoints "
        "(session_id, checkpoint_id, message_count, created_us, body) "
        "SELECT ?, checkpoint_id, message_count, created_us, body FROM __agents_checkpoints "
        "WHERE session_id = ? AND message_count <= ?",
        (tid, source_id, end),
    )
    return info


def truncate(
    db: sqlite3.Connection, sid: str, keep: int, fence_run_id: str | None, clock: Clock
) -> None:
    """Drop rows at index >= ``keep`` (MSG-4)."""
    row = load_session(db, sid)
    check_keep(sid, keep, row.message_count)
    assert_fence(sid, fence_run_id, row.current_run)
    cut_rows(db, row, keep)
    db.execute(
        "UPDATE __agents_sessions SET message_count = ?, ui_count = ? WHERE session_id = ?",
        (row.message_count, row.ui_count, sid),
    )
    touch(db, row, clock)


def finish_run(
    db: sqlite3.Connection, sid: str, run_id: str, status: RunStatus, clock: Clock
) -> None:
    """End the current live run (RUN-4)."""
    row = load_session(db, sid)
    check_id(run_id, "run_id", session_id=sid)
    check_finish_status(sid, status)
    assert_fence(sid, run_id, row.current_run)
    assert row.current_run is not None
    row.current_run = row.current_run.model_copy(update={"status": status, "ended_at": clock()})
    db.execute(
        "UPDATE __agents_sessions SET current_run = ? WHERE session_id = ?", (row.run_json, sid)
    )
    touch(db, row, clock)
