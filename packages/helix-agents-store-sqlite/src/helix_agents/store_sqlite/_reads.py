"""Reads, each on one snapshot of the reader connection.

Row reads are index range scans from the session's counters, so their cost
follows the rows returned, never the length of the session.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pydantic

from helix_agents.core import (
    Checkpoint,
    LateAnswer,
    Message,
    MessagePage,
    PendingApproval,
    SessionsPage,
    StoredContextItem,
    ValidationError,
)
from helix_agents.core.backend import (
    approvals_in_order,
    check_id,
    encode_sessions_cursor,
    parse_message_json,
    undelivered_in_order,
)
from helix_agents.core.errors import session_not_found
from helix_agents.core.limits import (
    MAX_COUNT,
    check_page_args,
    check_tail_limit,
    next_page_cursor,
    page_window,
)
from helix_agents.core.models import PageOrder, SessionSummary

from ._rows import SessionRow, from_us, load_session, to_us

__all__ = [
    "checkpoint",
    "checkpoints",
    "late_answers",
    "messages",
    "page",
    "pending_approvals",
    "queued_items",
    "sessions_page",
]

# A page's summaries are validated in one call: cheaper than one model built per row.
_SUMMARIES = pydantic.TypeAdapter(list[SessionSummary])


def _rows_from(db: sqlite3.Connection, sid: str, lo: int, hi: int, desc: bool) -> list[Message]:
    order = "DESC" if desc else "ASC"
    found = db.execute(
        f"SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? AND idx < ? "
        f"ORDER BY idx {order}",
        (sid, lo, hi),
    ).fetchall()
    return [parse_message_json(body) for (body,) in found]


# The session's counters and its last rows in one statement, hence on one snapshot: a
# missing session yields no row, an empty range one row with a NULL body (the LEFT JOIN).
_LAST_ROWS = (
    "SELECT m.body FROM __agents_sessions AS s LEFT JOIN __agents_messages AS m "
    "ON m.session_id = s.session_id AND m.idx >= max(s.first_index, s.message_count - ?) "
    "AND m.idx < s.message_count WHERE s.session_id = ? ORDER BY m.idx"
)


def messages(db: sqlite3.Connection, sid: str, limit: int | None) -> list[Message]:
    """Retained rows oldest first; ``limit`` keeps the last N (MSG-2). One statement."""
    refused = None
    if limit is not None:
        try:
            check_tail_limit(sid, limit)
        except ValidationError as exc:
            # Raised below, once the session is known to exist: the reference store's order.
            refused, limit = exc, 0
    found = db.execute(_LAST_ROWS, (MAX_COUNT if limit is None else limit, sid)).fetchall()
    if not found:
        raise session_not_found(sid)
    if refused is not None:
        raise refused
    return [parse_message_json(body) for (body,) in found if body is not None]


def page(
    db: sqlite3.Connection, sid: str, limit: int, cursor: str | None, order: PageOrder
) -> MessagePage:
    """One page of rows in ``order`` (MSG-3)."""
    row = load_session(db, sid)
    start = check_page_args(sid, limit, cursor, order)
    first, count = row.first_index, row.message_count
    lo, hi = page_window(order, start, limit, first, count)
    rows = _rows_from(db, sid, lo, hi, desc=order == "desc") if lo < hi else []
    next_cursor = next_page_cursor(sid, order, lo, hi, first, count)
    return MessagePage(messages=tuple(rows), next_cursor=next_cursor)


def session(db: sqlite3.Connection, sid: str) -> SessionRow:
    """The session's row (counters, run, activity)."""
    return load_session(db, sid)


def queued_items(db: sqlite3.Connection, sid: str) -> list[StoredContextItem]:
    """Undelivered context items by ``at`` then key (CI-4)."""
    load_session(db, sid)
    found = db.execute(
        "SELECT body FROM __agents_context_items WHERE session_id = ? AND delivered_index IS NULL",
        (sid,),
    ).fetchall()
    return undelivered_in_order(
        (StoredContextItem.model_validate_json(body), None) for (body,) in found
    )


def late_answers(db: sqlite3.Connection, sid: str) -> list[LateAnswer]:
    """Undelivered late answers by ``at`` then call id (LA-4)."""
    load_session(db, sid)
    found = db.execute(
        "SELECT body FROM __agents_late_answers WHERE session_id = ? AND delivered_index IS NULL",
        (sid,),
    ).fetchall()
    return undelivered_in_order((LateAnswer.model_validate_json(body), None) for (body,) in found)


def pending_approvals(db: sqlite3.Connection, sid: str) -> list[PendingApproval]:
    """Unresolved approvals by ``requested_at``, then id (APR-1)."""
    load_session(db, sid)
    found = db.execute(
        "SELECT body FROM __agents_approvals WHERE session_id = ? AND resolved = 0", (sid,)
    ).fetchall()
    return approvals_in_order(PendingApproval.model_validate_json(body) for (body,) in found)


def checkpoints(db: sqlite3.Connection, sid: str, latest: bool = False) -> list[Checkpoint]:
    """Checkpoints by ``message_count``, ``created_at``, id; or only the latest."""
    load_session(db, sid)
    return _checkpoints(db, "session_id = ?", [sid], latest)


def checkpoint(db: sqlite3.Connection, sid: str, checkpoint_id: str) -> Checkpoint | None:
    """The checkpoint ``checkpoint_id``, or ``None``."""
    load_session(db, sid)
    check_id(checkpoint_id, "checkpoint_id", session_id=sid)
    found = _checkpoints(db, "session_id = ? AND checkpoint_id = ?", [sid, checkpoint_id], False)
    return found[0] if found else None


def _checkpoints(
    db: sqlite3.Connection, where: str, params: list[str], latest: bool
) -> list[Checkpoint]:
    order = "DESC" if latest else "ASC"
    found = db.execute(
        f"SELECT body FROM __agents_checkpoints WHERE {where} "
        f"ORDER BY message_count {order}, created_us {order}, checkpoint_id {order}"
        + (" LIMIT 1" if latest else ""),
        params,
    ).fetchall()
    return [Checkpoint.model_validate_json(body) for (body,) in found]


def sessions_page(
    db: sqlite3.Connection, user_id: str, first: int, after: tuple[datetime, str] | None
) -> SessionsPage:
    """A user's sessions, newest activity first, ties by id (SES-6). One statement."""
    where = "user_id IS ?"
    params: list[str | int] = [user_id]
    if after is not None:
        at, after_id = to_us(after[0]), after[1]
        where += " AND (last_activity_us < ? OR (last_activity_us = ? AND session_id > ?))"
        params += [at, at, after_id]
    found = db.execute(
        "SELECT s.session_id, s.created_us, s.last_activity_us, s.message_count, "
        "(SELECT count(*) FROM __agents_approvals a "
        " WHERE a.session_id = s.session_id AND a.resolved = 0) "
        f"FROM __agents_sessions s WHERE {where} "
        "ORDER BY last_activity_us DESC, session_id ASC LIMIT ?",
        (*params, first + 1),
    ).fetchall()
    summaries = _SUMMARIES.validate_python(
        [
            {
                "id": sid,
                "created_at": from_us(created),
                "last_activity_at": from_us(last),
                "message_count": count,
                "pending_approvals": pending,
            }
            for sid, created, last, count, pending in found[:first]
        ]
    )
    next_cursor = None
    if len(found) > first:
        last = summaries[-1]
        next_cursor = encode_sessions_cursor(user_id, last.last_activity_at, last.id)
    return SessionsPage(sessions=tuple(summaries), next_cursor=next_cursor)
