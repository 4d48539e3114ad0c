"""Reads: a session's head and what a :class:`Want` names, a listing page, a scoped map.

Each is a plain function of a ``sqlite3`` connection, run inside a transaction
(a read snapshot, or a write's ``BEGIN IMMEDIATE`` for the snapshot a refusal
carries). Keyed lookups take their keys as one JSON array (``json_each``), so
each statement is prepared once whatever the number of keys; row reads are
ranges of the primary key, so their cost follows the rows returned.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    JsonObject,
    LateAnswer,
    PendingApproval,
    RunInfo,
    SessionSummary,
    StoredContextItem,
)
from helix_agents.core.backend import CheckpointRange, Snapshot, Want
from helix_agents.core.context import OutputRef

__all__ = ["HEAD", "Head", "from_us", "head", "listing", "scoped", "snapshot", "to_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
HEAD = (
    "SELECT version, user_id, created_us, last_activity_us, metadata, message_count, "
    "first_index, ui_count, current_run, window_start, compactions, preserved "
    "FROM __agents_sessions WHERE session_id = ?"
)
Head = tuple[int, str | None, int, int, str, int, int, int, str | None, int, int, int]
"""A session row, in the order of :data:`HEAD`'s columns."""
_QUEUES: dict[str, tuple[str, str, type[StoredContextItem] | type[LateAnswer]]] = {
    "context": ("__agents_context_items", "item_key", StoredContextItem),
    "late": ("__agents_late_answers", "call_id", LateAnswer),
}
_IN = "IN (SELECT value FROM json_each(?))"
_NOTHING = Want()


def to_us(at: datetime) -> int:
    """An aware datetime as exact integer microseconds since the epoch (sortable)."""
    return (at - _EPOCH) // _MICRO


def from_us(us: int) -> datetime:
    """The UTC datetime of :func:`to_us`."""
    return _EPOCH + timedelta(microseconds=us)


def head(db: sqlite3.Connection, sid: str) -> Head | None:
    """The session's row, or ``None``."""
    found: Head | None = db.execute(HEAD, (sid,)).fetchone()
    return found


def as_snapshot(sid: str, row: Head, run: RunInfo | None = None) -> Snapshot:
    """The head of a session row (``run``: its current run, if already parsed)."""
    version, user, created, last, meta, count, first, ui, run_json, start, number, kept = row
    if run is None and run_json is not None:
        run = RunInfo.model_validate_json(run_json)
    return Snapshot(
        session_id=sid,
        version=version,
        user_id=user,
        created_at=from_us(created),
        last_activity_at=from_us(last),
        metadata=json.loads(meta),
        message_count=count,
        first_index=first,
        ui_count=ui,
        current_run=run,
        window_start=start,
        compactions=number,
        preserved=bool(kept),
    )


def _all(db: sqlite3.Connection, sql: str, *args: Any) -> list[Any]:
    return db.execute(sql, args).fetchall()


def _keys(keys: Sequence[str]) -> str:
    return json.dumps(list(keys))


def snapshot(db: sqlite3.Connection, sid: str, want: Want) -> Snapshot | None:
    """The session's head and the answers to ``want``, or ``None``."""
    row = head(db, sid)
    if row is None:
        return None
    snap = as_snapshot(sid, row)
    if want == _NOTHING:
        return snap
    first, count, start = snap.first_index, snap.message_count, snap.window_start
    rows_from, hi = first, first
    if want.window:
        rows_from, hi = max(start, first), count
    elif want.rows is not None:
        rows_from, hi = want.rows.clip(first, count)
    answers: dict[str, Any] = {"rows_from": rows_from}
    if hi > rows_from:
        answers["rows"] = [
            body
            for (body,) in _all(
                db,
                "SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? "
                "AND idx < ? ORDER BY idx",
                sid,
                rows_from,
                hi,
            )
        ]
    if want.commit_id is not None:
        found = _all(
            db,
            "SELECT first_index, message_count FROM __agents_commits "
            "WHERE session_id = ? AND commit_id = ?",
            sid,
            want.commit_id,
        )
        if found:
            answers["replay"] = CommitResult(first_index=found[0][0], message_count=found[0][1])
    if want.run_id is not None:
        answers["run_id_used"] = bool(
            _all(
                db,
                "SELECT 1 FROM __agents_runs WHERE session_id = ? AND run_id = ?",
                sid,
                want.run_id,
            )
        )
    if want.queue_keys:
        answers["queue_state"] = {
            name: dict(
                _all(
                    db,
                    f"SELECT {key}, delivered_index FROM {table} "
                    f"WHERE session_id = ? AND {key} {_IN}",
                    sid,
                    _keys(keys),
                )
            )
            for name, keys in want.queue_keys.items()
            for table, key, _ in [_QUEUES[name]]
        }
    if want.approval_ids:
        answers["approval_state"] = {
            aid: "resolved" if resolved else "pending"
            for aid, resolved in _all(
                db,
                f"SELECT approval_id, resolved FROM __agents_approvals "
                f"WHERE session_id = ? AND approval_id {_IN}",
                sid,
                _keys(want.approval_ids),
            )
        }
    if want.checkpoint_ids:
        answers["named_checkpoints"] = {
            cid: Checkpoint.model_validate_json(body)
            for cid, body in _all(
                db,
                f"SELECT checkpoint_id, body FROM __agents_checkpoints "
                f"WHERE session_id = ? AND checkpoint_id {_IN}",
                sid,
                _keys(want.checkpoint_ids),
            )
        }
    if want.output_key is not None:
        found = _all(
            db,
            "SELECT ref FROM __agents_outputs WHERE session_id = ? AND caller_key = ?",
            sid,
            want.output_key,
        )
        if found:
            answers["keyed_output"] = OutputRef.model_validate_json(found[0][0])
    if want.output_id is not None:
        text = "content" if want.output_text else "''"
        found = _all(
            db,
            f"SELECT ref, {text} FROM __agents_outputs WHERE session_id = ? AND output_id = ?",
            sid,
            want.output_id,
        )
        if found:
            answers["output"] = (OutputRef.model_validate_json(found[0][0]), found[0][1])
    if want.queued is not None:
        table, _, kind = _QUEUES[want.queued]
        answers["queued"] = [
            kind.model_validate_json(body)
            for (body,) in _all(
                db,
                f"SELECT body FROM {table} WHERE session_id = ? AND delivered_index IS NULL",
                sid,
            )
        ]
    if want.pending:
        answers["pending"] = [
            PendingApproval.model_validate_json(body)
            for (body,) in _all(
                db,
                "SELECT body FROM __agents_approvals WHERE session_id = ? AND resolved = 0",
                sid,
            )
        ]
    if want.checkpoints is not None:
        answers["checkpoints"] = _checkpoints(db, sid, want.checkpoints)
    if want.window and snap.compactions:
        (summary,) = db.execute(
            "SELECT summary FROM __agents_compactions WHERE session_id = ? "
            "ORDER BY number DESC LIMIT 1",
            (sid,),
        ).fetchone()
        answers["summary"] = ContextMessage.model_validate_json(summary)
    if want.archive:
        answers["archive"] = _all(
            db, "SELECT idx, body FROM __agents_archive WHERE session_id = ? ORDER BY idx", sid
        )
    if want.session_scoped:
        answers["session_scoped"] = scoped(db, "session", sid)
    return replace(snap, **answers)


_PAGE = (
    "SELECT body FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id >= ?"
    " {high} ORDER BY checkpoint_id DESC LIMIT ?"
)


def _checkpoints(
    db: sqlite3.Connection, sid: str, where: CheckpointRange | Literal["all"]
) -> list[Checkpoint]:
    if where == "all":
        found = _all(db, "SELECT body FROM __agents_checkpoints WHERE session_id = ?", sid)
    elif where.high is None:
        found = _all(db, _PAGE.format(high=""), sid, where.low, where.limit)
    else:
        below = _PAGE.format(high="AND checkpoint_id < ?")
        found = _all(db, below, sid, where.low, where.high, where.limit)
    return [Checkpoint.model_validate_json(body) for (body,) in found]


def listing(
    db: sqlite3.Connection, user_id: str, after: tuple[datetime, str] | None, limit: int
) -> list[SessionSummary]:
    """Up to ``limit`` of the user's sessions after ``after``: newest activity first, ties by
    id. One statement, so its own snapshot."""
    where = "user_id = ?"
    params: list[str | int] = [user_id]
    if after is not None:
        at = to_us(after[0])
        where += " AND (last_activity_us < ? OR (last_activity_us = ? AND session_id > ?))"
        params += [at, at, after[1]]
    found = _all(
        db,
        "SELECT s.session_id, s.created_us, s.last_activity_us, s.message_count, "
        "(SELECT count(*) FROM __agents_approvals a "
        " WHERE a.session_id = s.session_id AND a.resolved = 0) "
        f"FROM __agents_sessions s WHERE {where} "
        "ORDER BY last_activity_us DESC, session_id ASC LIMIT ?",
        *params,
        limit,
    )
    return [
        SessionSummary(
            id=sid,
            created_at=from_us(created),
            last_activity_at=from_us(last),
            message_count=count,
            pending_approvals=pending,
        )
        for sid, created, last, count, pending in found
    ]


def scoped(db: sqlite3.Connection, scope: str, owner: str) -> JsonObject:
    """The ``(scope, owner)`` map of scoped state, ``{}`` if never written."""
    found = _all(
        db,
        "SELECT key, value FROM __agents_scoped_state WHERE scope = ? AND owner = ?",
        scope,
        owner,
    )
    return {key: json.loads(value) for key, value in found}
