"""Writes, each a plain function run inside the writer's ``BEGIN IMMEDIATE``: a plan
applied under the session's version guard, a new session or clone, a delete.

What each :class:`Changes` field means is core's (``apply_changes`` and
``copy_prefix`` in ``helix_agents.core.inprocess``); this module says the same
in SQL and decides nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from helix_agents.core import ConcurrencyConflictError, LateAnswer
from helix_agents.core.backend import (
    Changes,
    NewSession,
    Refused,
    Snapshot,
    Want,
    dump_message_json,
    rows_json,
)

from ._reads import as_snapshot, head, snapshot, to_us

__all__ = ["apply", "create", "delete", "restore"]

_HEAD = Want()

# Every table that holds a session's records; runs stay when a session is cleared.
_TABLES = (
    "__agents_messages",
    "__agents_context_items",
    "__agents_late_answers",
    "__agents_approvals",
    "__agents_checkpoints",
    "__agents_commits",
    "__agents_outputs",
    "__agents_compactions",
    "__agents_archive",
)
_QUEUES = {
    "context": ("__agents_context_items", "item_key"),
    "late": ("__agents_late_answers", "call_id"),
}
_SAVE = (
    "UPDATE __agents_sessions SET version = ?, last_activity_us = ?, message_count = ?, "
    "first_index = ?, ui_count = ?, current_run = ?, window_start = ?, compactions = ?, "
    "preserved = ?, metadata = ? WHERE session_id = ?"
)
_ROWS = "INSERT INTO __agents_messages VALUES (?, ?, ?, ?)"
_REDACT = "UPDATE __agents_messages SET body = ? WHERE session_id = ? AND idx = ?"
_DELIVER = "UPDATE {} SET delivered_index = ? WHERE session_id = ? AND {} = ?"
_ENQUEUE = "INSERT OR REPLACE INTO {} VALUES (?, ?, NULL, ?)"
_SCOPED = "INSERT OR REPLACE INTO __agents_scoped_state VALUES (?, ?, ?, ?)"
_ARCHIVE_END = "SELECT coalesce(max(seq), 0) FROM __agents_archive WHERE session_id = ?"
_ARCHIVE = (
    "INSERT INTO __agents_archive SELECT session_id, ? + row_number() OVER (ORDER BY idx), "
    "idx, body FROM __agents_messages WHERE session_id = ? AND idx < ?"
)
_ARCHIVED = "INSERT INTO __agents_archive VALUES (?, ?, ?, ?)"
_RESOLVE = (
    "INSERT INTO __agents_approvals (session_id, approval_id, resolved) VALUES (?, ?, 1) "
    "ON CONFLICT DO UPDATE SET resolved = 1"
)
_UNKEY = "UPDATE __agents_outputs SET caller_key = NULL WHERE session_id = ? AND caller_key = ?"
_UI_FROM = (
    "SELECT count(*) FROM __agents_messages WHERE session_id = ? AND idx >= ? AND is_context = 0"
)
_WINDOW = (
    "SELECT count(*), coalesce(max(boundary), 0) FROM __agents_compactions WHERE session_id = ?"
)
_CREATE = (
    "INSERT INTO __agents_sessions (session_id, version, user_id, created_us, last_activity_us, "
    "metadata, message_count, first_index, ui_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id) DO NOTHING"
)
_CLONE_ROWS = (
    "INSERT INTO __agents_messages SELECT ?, idx, is_context, body FROM __agents_messages "
    "WHERE session_id = ? AND idx < ? ORDER BY idx"
)
_CLONE_CHECKPOINTS = (
    "INSERT INTO __agents_checkpoints SELECT ?, checkpoint_id, message_count, body "
    "FROM __agents_checkpoints WHERE session_id = ? AND message_count <= ?"
)


def _json(record: Any) -> str:
    text: str = record.model_dump_json(by_alias=True, exclude_unset=True)
    return text


def apply(
    db: sqlite3.Connection, sid: str, version: int, c: Changes, want: Want
) -> Refused | Snapshot:
    """Apply ``c`` in field order if the session is still at ``version`` (its row, read
    under the write lock, is the guard); the new head, else a refusal with the session
    read with ``want``."""
    row = head(db, sid)
    if row is None or row[0] != version:
        return Refused(None if row is None else snapshot(db, sid, want))
    _, user, created, _, meta, count, first, ui, run_json, start, number, kept = row
    if c.clear:
        _delete(db, sid, _TABLES)
        count = first = ui = start = number = kept = 0
    if c.cut_to is not None:
        count, ui, start, number = _cut(db, sid, min(c.cut_to, count), ui, start, number)
    if c.run is not None:
        run_json = _json(c.run)
        db.execute("INSERT OR IGNORE INTO __agents_runs VALUES (?, ?)", (sid, c.run.run_id))
    if c.rows:
        texts = zip(c.rows, rows_json(c), strict=True)
        db.executemany(
            _ROWS, [(sid, count + i, r.role == "context", t) for i, (r, t) in enumerate(texts)]
        )
        count += len(c.rows)
        ui += sum(row.role != "context" for row in c.rows)
    for queue, key, index in c.deliveries:
        db.execute(_DELIVER.format(*_QUEUES[queue]), (index, sid, key))
    if (record := c.enqueue) is not None:
        key = record.call_id if isinstance(record, LateAnswer) else record.key
        table = _QUEUES["late" if isinstance(record, LateAnswer) else "context"][0]
        db.execute(_ENQUEUE.format(table), (sid, key, _json(record)))
    if c.scoped:
        db.executemany(
            _SCOPED,
            [
                (scope, sid if scope == "session" else owner, key, json.dumps(value))
                for (scope, owner), keys in c.scoped.items()
                for key, value in keys.items()
            ],
        )
    if c.commit is not None:
        cid, done = c.commit
        db.execute(
            "INSERT OR REPLACE INTO __agents_commits VALUES (?, ?, ?, ?)",
            (sid, cid, done.first_index, done.message_count),
        )
    if c.drop_below is not None:
        if c.archive:
            (end,) = db.execute(_ARCHIVE_END, (sid,)).fetchone()
            db.execute(_ARCHIVE, (end, sid, c.drop_below))
        db.execute(
            "DELETE FROM __agents_messages WHERE session_id = ? AND idx < ?", (sid, c.drop_below)
        )
        first = c.drop_below
    if c.archived:
        (end,) = db.execute(_ARCHIVE_END, (sid,)).fetchone()
        db.executemany(
            _ARCHIVED,
            [
                (sid, end + n, index, dump_message_json(row))
                for n, (index, row) in enumerate(c.archived, 1)
            ],
        )
    if c.approvals:
        db.executemany(
            "INSERT OR REPLACE INTO __agents_approvals VALUES (?, ?, 0, ?)",
            [(sid, a.approval_id, _json(a)) for a in c.approvals],
        )
    if c.resolve is not None:
        db.execute(_RESOLVE, (sid, c.resolve))
    if (cp := c.checkpoint) is not None:
        db.execute(
            "INSERT OR REPLACE INTO __agents_checkpoints VALUES (?, ?, ?, ?)",
            (sid, cp.checkpoint_id, cp.message_count, _json(cp)),
        )
    if c.delete_checkpoints:
        db.executemany(
            "DELETE FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id = ?",
            [(sid, cid) for cid in c.delete_checkpoints],
        )
    if c.output is not None:
        ref, text = c.output
        if ref.key is not None:  # a key names the latest output stored under it
            db.execute(_UNKEY, (sid, ref.key))
        db.execute(
            "INSERT OR REPLACE INTO __agents_outputs VALUES (?, ?, ?, ?, ?)",
            (sid, ref.output_id, ref.key, ref.model_dump_json(), text),
        )
    if c.compaction is not None:
        start, summary = c.compaction
        number += 1
        db.execute(
            "INSERT INTO __agents_compactions VALUES (?, ?, ?, ?)",
            (sid, number, start, dump_message_json(summary)),
        )
    if c.metadata is not None:
        meta = json.dumps(c.metadata)
    if c.redact is not None:
        # secure_delete zeroes the bytes the old row leaves free, in this statement only.
        index, redacted = c.redact
        db.execute("PRAGMA secure_delete = ON").fetchall()
        db.execute(_REDACT, (dump_message_json(redacted), sid, index))
        db.execute("PRAGMA secure_delete = OFF").fetchall()
    activity, kept = to_us(c.activity), int(kept or c.preserve)
    head_values = (version + 1, activity, count, first, ui, run_json, start, number, kept)
    db.execute(_SAVE, (*head_values, meta, sid))
    saved = (version + 1, user, created, activity, meta, count, first, ui, run_json, start)
    return as_snapshot(sid, (*saved, number, kept), c.run)


def _cut(
    db: sqlite3.Connection, sid: str, keep: int, ui: int, start: int, number: int
) -> tuple[int, int, int, int]:
    """Drop rows at index >= ``keep`` and what hung on them: deliveries they made are
    queued again (CI-6); checkpoints past ``keep``, commit ids whose rows went (IDEM-2)
    and compactions past the cut (CS-11) go. The new count, UI count and window."""
    (gone_ui,) = db.execute(_UI_FROM, (sid, keep)).fetchone()
    db.execute("DELETE FROM __agents_messages WHERE session_id = ? AND idx >= ?", (sid, keep))
    for table, _ in _QUEUES.values():
        db.execute(
            f"UPDATE {table} SET delivered_index = NULL "
            "WHERE session_id = ? AND delivered_index >= ?",
            (sid, keep),
        )
    for table in ("__agents_checkpoints", "__agents_commits"):
        db.execute(f"DELETE FROM {table} WHERE session_id = ? AND message_count > ?", (sid, keep))
    if number:
        db.execute(
            "DELETE FROM __agents_compactions WHERE session_id = ? AND boundary > ?", (sid, keep)
        )
        # Boundaries grow with the number, so the cut took the latest ones.
        number, start = db.execute(_WINDOW, (sid,)).fetchone()
    return keep, ui - gone_ui, start, number


def create(db: sqlite3.Connection, new: NewSession) -> Literal["created", "exists"] | Refused:
    """Insert the session unless its id exists. A clone first needs its source still at
    the version read; it gets the source's rows below ``end`` and the checkpoints in
    range, nothing else (CI-9, LA-9)."""
    count = first = ui = 0
    if new.clone_of is not None:
        source, version, count = new.clone_of
        row = head(db, source)
        if row is None or row[0] != version:
            return Refused(None if row is None else snapshot(db, source, Want()))
        (cut_ui,) = db.execute(_UI_FROM, (source, count)).fetchone()
        first, ui = row[6], row[7] - cut_ui
    now = to_us(new.created_at)
    meta = json.dumps(new.metadata)
    values = (new.session_id, new.version, new.user_id, now, now, meta, count, first, ui)
    if db.execute(_CREATE, values).rowcount == 0:
        return "exists"
    if new.clone_of is not None:
        db.execute(_CLONE_ROWS, (new.session_id, new.clone_of[0], count))
        db.execute(_CLONE_CHECKPOINTS, (new.session_id, new.clone_of[0], count))
    return "created"


def restore(
    db: sqlite3.Connection, new: NewSession, plans: Sequence[Changes]
) -> Literal["created", "exists"]:
    """Insert the session and apply ``plans`` in order, in the caller's one transaction:
    an exception rolls all of it back (docs/export.md, EXP-11)."""
    if create(db, new) == "exists":
        return "exists"
    version = new.version
    for changes in plans:
        if isinstance(apply(db, new.session_id, version, changes, _HEAD), Refused):
            raise ConcurrencyConflictError(
                f"session {new.session_id!r}: moved inside its own import's transaction",
                session_id=new.session_id,
            )
        version += 1
    return "created"


def delete(db: sqlite3.Connection, sid: str, version: int | None = None) -> bool:
    """Remove the session and everything it holds (only if it is at ``version``, when
    given); whether it did."""
    if version is None:
        gone = db.execute("DELETE FROM __agents_sessions WHERE session_id = ?", (sid,))
    else:
        gone = db.execute(
            "DELETE FROM __agents_sessions WHERE session_id = ? AND version = ?", (sid, version)
        )
    if gone.rowcount == 0:
        return False
    _delete(db, sid, (*_TABLES, "__agents_runs"))
    return True


def erase_user(db: sqlite3.Connection, user_id: str, session_ids: Sequence[str]) -> None:
    """Delete the sessions and the user's map of scoped state with ``secure_delete`` on
    for these statements, so the bytes they free are zeroed (docs/lifecycle.md)."""
    db.execute("PRAGMA secure_delete = ON").fetchall()
    for sid in session_ids:
        delete(db, sid)
    db.execute("DELETE FROM __agents_scoped_state WHERE scope = 'user' AND owner = ?", (user_id,))
    db.execute("PRAGMA secure_delete = OFF").fetchall()


def _delete(db: sqlite3.Connection, sid: str, tables: tuple[str, ...]) -> None:
    """Drop the session's records from ``tables``, and its own map of scoped state."""
    for table in tables:
        db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
    db.execute("DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = ?", (sid,))
