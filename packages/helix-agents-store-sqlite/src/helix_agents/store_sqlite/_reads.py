"""Reads: a session's head and what a :class:`Want` names, a listing page, a scoped map.

Each is a plain function of a ``sqlite3`` connection that answers from one state of
the file: one statement, two checked by version, or a transaction (a read's own, or
the write whose refusal carries the snapshot). Keyed lookups take their keys as one
JSON array (``json_each``), so a statement is prepared once whatever the number of
keys; row reads are ranges of the primary key, so their cost follows the rows
returned, not the session's length.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    JsonObject,
    LateAnswer,
    Message,
    PendingApproval,
    StoredContextItem,
)
from helix_agents.core.backend import RowSpan, Snapshot, Want, parse_messages_json
from helix_agents.core.context import OutputRef
from helix_agents.core.models import ListedSession, RunInfo

__all__ = ["Head", "all_page", "as_snapshot", "head", "listing", "scoped", "snapshot", "to_us"]

Head = tuple[int, str | None, int, int, str, int, int, int, str | None, int, int, int]
"""A session row: version, user_id, created_us, last_activity_us, metadata, message_count,
first_index, ui_count, current_run, window_start, compactions, preserved."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_NOTHING = Want()
_IN = "IN (SELECT value FROM json_each(?))"
_COLUMNS = (
    "version, user_id, created_us, last_activity_us, metadata, message_count, first_index, "
    "ui_count, current_run, window_start, compactions, preserved"
)
_HEAD = f"SELECT {_COLUMNS} FROM __agents_sessions WHERE session_id = ?"
# Rows read after the head outside a transaction: none unless the session is still at
# the version of the head (a write in between bumped it).
_ROWS_AT = (
    "SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? AND idx < ? "
    "AND (SELECT version FROM __agents_sessions WHERE session_id = ?) = ? ORDER BY idx"
)
_ROWS = (
    "SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx"
)
_COMMIT = (
    "SELECT first_index, message_count FROM __agents_commits WHERE session_id = ? AND commit_id = ?"
)
_RUN = "SELECT 1 FROM __agents_runs WHERE session_id = ? AND run_id = ?"
_DELIVERED = "SELECT {key}, delivered_index FROM {table} WHERE session_id = ? AND {key} " + _IN
_QUEUED = "SELECT body FROM {table} WHERE session_id = ? AND delivered_index IS NULL"
_QUEUES: dict[str, tuple[str, str, type[StoredContextItem] | type[LateAnswer]]] = {
    "context": ("__agents_context_items", "item_key", StoredContextItem),
    "late": ("__agents_late_answers", "call_id", LateAnswer),
}
_APPROVALS = (
    "SELECT approval_id, resolved FROM __agents_approvals WHERE session_id = ? AND approval_id "
    + _IN
)
_PENDING = "SELECT body FROM __agents_approvals WHERE session_id = ? AND resolved = 0"
_NAMED = (
    "SELECT checkpoint_id, body FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id "
    + _IN
)
_ALL_CHECKPOINTS = "SELECT body FROM __agents_checkpoints WHERE session_id = ?"
_PAGE = (
    "SELECT body FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id >= ? {high}"
    "ORDER BY checkpoint_id DESC LIMIT ?"
)
_KEYED = "SELECT ref FROM __agents_outputs WHERE session_id = ? AND caller_key = ?"
_OUTPUT = "SELECT ref, {text} FROM __agents_outputs WHERE session_id = ? AND output_id = ?"
_SUMMARY = (
    "SELECT summary FROM __agents_compactions WHERE session_id = ? ORDER BY number DESC LIMIT 1"
)
_ARCHIVE = "SELECT idx, body FROM __agents_archive WHERE session_id = ? ORDER BY seq"
_SCOPED = "SELECT key, value FROM __agents_scoped_state WHERE scope = ? AND owner = ?"
_LISTING = (
    "SELECT s.session_id, s.created_us, s.last_activity_us, s.message_count, "
    "(SELECT count(*) FROM __agents_approvals AS a WHERE a.session_id = s.session_id "
    "AND a.resolved = 0), s.metadata FROM __agents_sessions AS s WHERE user_id = ? {after}"
    "ORDER BY last_activity_us DESC, session_id LIMIT ?"
)
_ALL = (  # the store-wide listing: a range of the primary key
    "SELECT s.session_id, s.user_id, s.created_us, s.last_activity_us, s.message_count, "
    "(SELECT count(*) FROM __agents_approvals AS a WHERE a.session_id = s.session_id "
    "AND a.resolved = 0), s.metadata FROM __agents_sessions AS s WHERE s.session_id > ? "
    "ORDER BY s.session_id LIMIT ?"
)
_AFTER = "AND (last_activity_us < ? OR (last_activity_us = ? AND session_id > ?)) "


def to_us(at: datetime) -> int:
    """An aware datetime as exact integer microseconds since the epoch (sortable)."""
    return (at - _EPOCH) // _MICRO


def _at(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def head(db: sqlite3.Connection, sid: str) -> Head | None:
    """The session's row, or ``None``."""
    found: Head | None = db.execute(_HEAD, (sid,)).fetchone()
    return found


def as_snapshot(
    sid: str, row: Head, run: RunInfo | None = None, answers: dict[str, Any] | None = None
) -> Snapshot:
    """The head a session row holds (``run``: its current run, when already parsed), with
    ``answers`` to a :class:`Want`."""
    version, user, created, last, meta, count, first, ui, run_json, start, number, kept = row
    if run is None and run_json is not None:
        run = RunInfo.model_validate_json(run_json)
    return Snapshot(
        session_id=sid,
        version=version,
        user_id=user,
        created_at=_at(created),
        last_activity_at=_at(last),
        metadata=json.loads(meta),
        message_count=count,
        first_index=first,
        ui_count=ui,
        current_run=run,
        window_start=start,
        compactions=number,
        preserved=bool(kept),
        **(answers or {}),
    )


def snapshot(db: sqlite3.Connection, sid: str, want: Want) -> Snapshot | None:
    """The session's head and the answers to ``want`` (as core's ``snapshot_of``), or
    ``None``. The head alone, or with rows only, is one statement (its own snapshot);
    a read of more runs in a transaction, unless it is inside one already."""
    if want.rows is not None and want == Want(rows=want.rows):
        return _with_rows(db, sid, want.rows)
    if want == _NOTHING or db.in_transaction:
        return _answer(db, sid, want)
    db.execute("BEGIN")
    try:
        return _answer(db, sid, want)
    finally:
        with contextlib.suppress(sqlite3.Error):  # gone with a failure already
            db.rollback()


def _with_rows(db: sqlite3.Connection, sid: str, span: RowSpan) -> Snapshot | None:
    """The head and the rows ``span`` selects, in two statements without a transaction
    (cheaper than ``BEGIN`` and ``ROLLBACK``): the rows' statement answers only at the
    head's version, else both run again."""
    while True:
        row = head(db, sid)
        if row is None:
            return None
        lo, hi = span.clip(row[6], row[5])
        bodies: list[str] = []
        if hi > lo:
            bodies = [body for (body,) in db.execute(_ROWS_AT, (sid, lo, hi, sid, row[0]))]
            if not bodies and head(db, sid) != row:
                continue
        return as_snapshot(sid, row, None, {"rows_from": lo, "rows": _messages(bodies)})


def _messages(bodies: list[str]) -> list[Message]:
    # One validation pass over the rows as a JSON array: cheaper than one per row.
    return parse_messages_json(f"[{','.join(bodies)}]") if bodies else []


def _answer(db: sqlite3.Connection, sid: str, want: Want) -> Snapshot | None:
    row = head(db, sid)
    if row is None:
        return None
    if want == _NOTHING:
        return as_snapshot(sid, row)

    def rows(sql: str, *args: Any) -> list[Any]:
        return db.execute(sql, (sid, *args)).fetchall()

    count, first, start, compactions = row[5], row[6], row[9], row[10]
    lo, hi = first, first
    if want.window:
        lo, hi = max(start, first), count
    elif want.rows is not None:
        lo, hi = want.rows.clip(first, count)
    got: dict[str, Any] = {"rows_from": lo}
    if hi > lo:
        got["rows"] = _messages([body for (body,) in rows(_ROWS, lo, hi)])
    if want.commit_id is not None:
        for landed, upto in rows(_COMMIT, want.commit_id):
            got["replay"] = CommitResult(first_index=landed, message_count=upto)
    if want.run_id is not None:
        got["run_id_used"] = bool(rows(_RUN, want.run_id))
    if want.queue_keys:
        got["queue_state"] = {
            name: dict(rows(_DELIVERED.format(table=table, key=key), json.dumps(list(keys))))
            for name, keys in want.queue_keys.items()
            for table, key, _ in [_QUEUES[name]]
        }
    if want.approval_ids:
        found = rows(_APPROVALS, json.dumps(list(want.approval_ids)))
        got["approval_state"] = {aid: "resolved" if done else "pending" for aid, done in found}
    if want.checkpoint_ids:
        found = rows(_NAMED, json.dumps(list(want.checkpoint_ids)))
        got["named_checkpoints"] = {c: Checkpoint.model_validate_json(b) for c, b in found}
    if want.output_key is not None:
        for (ref,) in rows(_KEYED, want.output_key):
            got["keyed_output"] = OutputRef.model_validate_json(ref)
    if want.output_id is not None:
        text = "content" if want.output_text else "''"
        for ref, content in rows(_OUTPUT.format(text=text), want.output_id):
            got["output"] = (OutputRef.model_validate_json(ref), content)
    if want.queued is not None:
        table, _, kind = _QUEUES[want.queued]
        found = rows(_QUEUED.format(table=table))
        got["queued"] = [kind.model_validate_json(body) for (body,) in found]
    if want.pending:
        got["pending"] = [PendingApproval.model_validate_json(b) for (b,) in rows(_PENDING)]
    if want.checkpoints == "all":
        found = rows(_ALL_CHECKPOINTS)
    elif want.checkpoints is None:
        found = []
    elif want.checkpoints.high is None:
        found = rows(_PAGE.format(high=""), want.checkpoints.low, want.checkpoints.limit)
    else:
        where = want.checkpoints
        found = rows(
            _PAGE.format(high="AND checkpoint_id < ? "), where.low, where.high, where.limit
        )
    got["checkpoints"] = [Checkpoint.model_validate_json(body) for (body,) in found]
    if want.window and compactions:
        got["summary"] = ContextMessage.model_validate_json(rows(_SUMMARY)[0][0])
    if want.archive:
        got["archive"] = rows(_ARCHIVE)
    if want.session_scoped:
        got["session_scoped"] = scoped(db, "session", sid)
    return as_snapshot(sid, row, None, got)


def listing(
    db: sqlite3.Connection, user_id: str, after: tuple[datetime, str] | None, limit: int
) -> list[ListedSession]:
    """Up to ``limit`` of the user's sessions after ``after``: newest activity first, ties
    by id. One statement on the listing index; with the metadata, so core decides expiry
    without a read of each (docs/lifecycle.md)."""
    args: tuple[Any, ...] = (user_id, limit)
    if after is not None:
        at = to_us(after[0])
        args = (user_id, at, at, after[1], limit)
    found = db.execute(_LISTING.format(after="" if after is None else _AFTER), args)
    return [
        ListedSession(
            id=sid,
            user_id=user_id,
            created_at=_at(created),
            last_activity_at=_at(last),
            message_count=count,
            pending_approvals=pending,
            metadata=json.loads(meta),
        )
        for sid, created, last, count, pending, meta in found.fetchall()
    ]


def all_page(db: sqlite3.Connection, after_id: str | None, limit: int) -> list[ListedSession]:
    """Up to ``limit`` sessions after ``after_id`` by id (BINARY: UTF-8 byte order)."""
    found = db.execute(_ALL, (after_id or "", limit)).fetchall()
    return [
        ListedSession(
            id=sid,
            user_id=user,
            created_at=_at(created),
            last_activity_at=_at(last),
            message_count=count,
            pending_approvals=pending,
            metadata=json.loads(meta),
        )
        for sid, user, created, last, count, pending, meta in found
    ]


def scoped(db: sqlite3.Connection, scope: str, owner: str) -> JsonObject:
    """The ``(scope, owner)`` map of scoped state, ``{}`` if never written."""
    found = db.execute(_SCOPED, (scope, owner)).fetchall()
    return {key: json.loads(value) for key, value in found}
