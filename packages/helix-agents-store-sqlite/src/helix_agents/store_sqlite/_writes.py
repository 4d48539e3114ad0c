"""Writes, each run inside the writer's ``BEGIN IMMEDIATE`` transaction: a plan core
built applied under the session's version guard, a new session or clone, a delete.

What each :class:`Changes` field means is core's (``helix_agents.core.inprocess``,
docs/backends/writing.md); this module says it in SQL and decides nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Literal

from helix_agents.core import LateAnswer
from helix_agents.core.backend import (
    Changes,
    NewSession,
    Refused,
    Snapshot,
    Want,
    dump_message_json,
)
from helix_agents.core.seam import rows_json

from ._reads import as_snapshot, head, snapshot, to_us

__all__ = ["apply", "create", "delete"]

_SESSION_TABLES = (
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
    "preserved = ? WHERE session_id = ?"
)


def _dump(record: Any) -> str:
    text: str = record.model_dump_json(by_alias=True, exclude_unset=True)
    return text


def apply(
    db: sqlite3.Connection, sid: str, version: int, changes: Changes, want: Want
) -> Refused | Snapshot:
    """Apply ``changes`` if the session is at ``version`` (the guard: its row, read under
    the write lock); the new head, or a refusal with the current snapshot."""
    row = head(db, sid)
    if row is None or row[0] != version:
        return Refused(None if row is None else snapshot(db, sid, want))
    _, user, created, _, meta, count, first, ui, run_json, start, number, kept = row
    c = changes
    if c.clear:
        for table in _SESSION_TABLES:
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
        _forget_scoped(db, sid)
        count = first = ui = start = number = kept = 0
    if c.cut_to is not None:
        count, ui, start, number = _cut(db, sid, min(c.cut_to, count), ui, start, number)
    if c.run is not None:
        run_json = _dump(c.run)
        db.execute("INSERT OR IGNORE INTO __agents_runs VALUES (?, ?)", (sid, c.run.run_id))
    if c.rows:
        db.executemany(
            "INSERT INTO __agents_messages (session_id, idx, is_context, body) VALUES (?, ?, ?, ?)",
            [
                (sid, count + i, row.role == "context", text)
                for i, (row, text) in enumerate(zip(c.rows, rows_json(c), strict=True))
            ],
        )
        count += len(c.rows)
        ui += sum(row.role != "context" for row in c.rows)
    for queue, key, index in c.deliveries:
        table, column = _QUEUES[queue]
        db.execute(
            f"UPDATE {table} SET delivered_index = ? WHERE session_id = ? AND {column} = ?",
            (index, sid, key),
        )
    if c.enqueue is not None:
        queue, key = (
            ("late", c.enqueue.call_id)
            if isinstance(c.enqueue, LateAnswer)
            else ("context", c.enqueue.key)
        )
        table, column = _QUEUES[queue]
        db.execute(
            f"INSERT OR REPLACE INTO {table} (session_id, {column}, delivered_index, body) "
            "VALUES (?, ?, NULL, ?)",
            (sid, key, _dump(c.enqueue)),
        )
    if c.scoped:
        _merge_scoped(db, sid, c.scoped)
    if c.commit is not None:
        commit_id, result = c.commit
        db.execute(
            "INSERT OR REPLACE INTO __agents_commits VALUES (?, ?, ?, ?)",
            (sid, commit_id, result.first_index, result.message_count),
        )
    if c.drop_below is not None:
        if c.archive:
            db.execute(
                "INSERT INTO __agents_archive (session_id, idx, body) SELECT session_id, idx, "
                "body FROM __agents_messages WHERE session_id = ? AND idx < ? ORDER BY idx",
                (sid, c.drop_below),
            )
        db.execute(
            "DELETE FROM __agents_messages WHERE session_id = ? AND idx < ?", (sid, c.drop_below)
        )
        first = c.drop_below
    if c.approvals:
        db.executemany(
            "INSERT OR REPLACE INTO __agents_approvals VALUES (?, ?, 0, ?)",
            [(sid, a.approval_id, _dump(a)) for a in c.approvals],
        )
    if c.resolve is not None:
        db.execute(
            "INSERT INTO __agents_approvals (session_id, approval_id, resolved) VALUES (?, ?, 1) "
            "ON CONFLICT DO UPDATE SET resolved = 1",
            (sid, c.resolve),
        )
    if c.checkpoint is not None:
        cp = c.checkpoint
        db.execute(
            "INSERT OR REPLACE INTO __agents_checkpoints VALUES (?, ?, ?, ?)",
            (sid, cp.checkpoint_id, cp.message_count, _dump(cp)),
        )
    if c.delete_checkpoints:
        db.executemany(
            "DELETE FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id = ?",
            [(sid, cid) for cid in c.delete_checkpoints],
        )
    if c.output is not None:
        ref, text = c.output
        if ref.key is not None:  # the key names the newest output stored under it
            db.execute(
                "UPDATE __agents_outputs SET caller_key = NULL "
                "WHERE session_id = ? AND caller_key = ?",
                (sid, ref.key),
            )
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
    activity, kept = to_us(c.activity), int(kept or c.preserve)
    db.execute(_SAVE, (version + 1, activity, count, first, ui, run_json, start, number, kept, sid))
    saved = (
        version + 1,
        user,
        created,
        activity,
        meta,
        count,
        first,
        ui,
        run_json,
        start,
        number,
        kept,
    )
    return as_snapshot(sid, saved, c.run)


def _cut(
    db: sqlite3.Connection, sid: str, keep: int, ui: int, start: int, number: int
) -> tuple[int, int, int, int]:
    """Drop rows at index >= ``keep`` and what hung on them: deliveries they made are
    queued again (CI-6); checkpoints past ``keep``, commit ids that no longer survive
    (IDEM-2) and compactions past the cut (CS-11) go. The new counters."""
    (gone_ui,) = db.execute(
        "SELECT count(*) FROM __agents_messages "
        "WHERE session_id = ? AND idx >= ? AND is_context = 0",
        (sid, keep),
    ).fetchone()
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
        number, start = db.execute(
            "SELECT count(*), coalesce(max(boundary), 0) FROM __agents_compactions "
            "WHERE session_id = ?",
            (sid,),
        ).fetchone()
    return keep, ui - gone_ui, start, number


def _merge_scoped(
    db: sqlite3.Connection, sid: str, scoped: Mapping[tuple[str, str], Mapping[str, Any]]
) -> None:
    """Set the given keys of each map (a session's own map: owner ``sid``)."""
    db.executemany(
        "INSERT OR REPLACE INTO __agents_scoped_state VALUES (?, ?, ?, ?)",
        [
            (
                scope,
                sid if scope == "session" else owner,
                key,
                json.dumps(value, ensure_ascii=False),
            )
            for (scope, owner), values in scoped.items()
            for key, value in values.items()
        ],
    )


def _forget_scoped(db: sqlite3.Connection, sid: str) -> None:
    db.execute("DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = ?", (sid,))


def create(db: sqlite3.Connection, new: NewSession) -> Literal["created", "exists"] | Refused:
    """Insert the session unless its id exists; a clone copies rows below ``end`` and the
    checkpoints in range from a source still at the version read (CI-9, LA-9)."""
    count = first = ui = 0
    if new.clone_of is not None:
        source, version, end = new.clone_of
        row = head(db, source)
        if row is None or row[0] != version:
            return Refused(None if row is None else snapshot(db, source, Want()))
        first = row[6]
        (cut_ui,) = db.execute(
            "SELECT count(*) FROM __agents_messages "
            "WHERE session_id = ? AND idx >= ? AND is_context = 0",
            (source, end),
        ).fetchone()
        count, ui = end, row[7] - cut_ui
    now = to_us(new.created_at)
    inserted = db.execute(
        "INSERT INTO __agents_sessions (session_id, version, user_id, created_us, "
        "last_activity_us, metadata, message_count, first_index, ui_count) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING",
        (
            new.session_id,
            new.version,
            new.user_id,
            now,
            now,
            json.dumps(new.metadata, ensure_ascii=False),
            count,
            first,
            ui,
        ),
    )
    if inserted.rowcount == 0:
        return "exists"
    if new.clone_of is not None:
        source, _, end = new.clone_of
        db.execute(
            "INSERT INTO __agents_messages SELECT ?, idx, is_context, body "
            "FROM __agents_messages WHERE session_id = ? AND idx < ? ORDER BY idx",
            (new.session_id, source, end),
        )
        db.execute(
            "INSERT INTO __agents_checkpoints SELECT ?, checkpoint_id, message_count, body "
            "FROM __agents_checkpoints WHERE session_id = ? AND message_count <= ?",
            (new.session_id, source, end),
        )
    return "created"


def delete(db: sqlite3.Connection, sid: str) -> bool:
    """Remove the session and everything it holds; whether it existed."""
    gone = db.execute("DELETE FROM __agents_sessions WHERE session_id = ?", (sid,))
    if gone.rowcount == 0:
        return False
    for table in (*_SESSION_TABLES, "__agents_runs"):
        db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
    _forget_scoped(db, sid)
    return True
