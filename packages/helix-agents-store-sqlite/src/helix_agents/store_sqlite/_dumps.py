"""Export reads (docs/export.md, EXP-2, EXP-3): a session's every record in one read
transaction, and every app and user map of scoped state."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from typing import Any

from helix_agents.core import CommitResult, JsonObject, LateAnswer, StoredContextItem
from helix_agents.core.backend import DUMP_WANT, SessionDump
from helix_agents.core.context import OutputRef

from . import _reads

__all__ = ["dump", "scoped_maps"]

_RUNS = "SELECT run_id FROM __agents_runs WHERE session_id = ?"
_QUEUE = "SELECT body, delivered_index FROM {table} WHERE session_id = ?"
_RESOLVED = "SELECT approval_id FROM __agents_approvals WHERE session_id = ? AND resolved = 1"
_COMMITS = "SELECT commit_id, first_index, message_count FROM __agents_commits WHERE session_id = ?"
_OUTPUTS = "SELECT ref, content FROM __agents_outputs WHERE session_id = ?"
_COMPACTIONS = (
    "SELECT boundary, summary FROM __agents_compactions WHERE session_id = ? ORDER BY number"
)
_MAPS = (
    "SELECT scope, owner, key, value FROM __agents_scoped_state "
    "WHERE scope IN ('app', 'user') ORDER BY scope, owner, key"
)


def dump(db: sqlite3.Connection, sid: str) -> SessionDump | None:
    """Every record of the session, read in one transaction; ``None`` if it is gone."""
    db.execute("BEGIN")
    try:
        snap = _reads.snapshot(db, sid, DUMP_WANT)
        if snap is None:
            return None

        def rows(sql: str) -> list[Any]:
            return db.execute(sql, (sid,)).fetchall()

        return SessionDump(
            snapshot=snap,
            run_ids=[rid for (rid,) in rows(_RUNS)],
            context_items=[
                (StoredContextItem.model_validate_json(body), at)
                for body, at in rows(_QUEUE.format(table="__agents_context_items"))
            ],
            late_answers=[
                (LateAnswer.model_validate_json(body), at)
                for body, at in rows(_QUEUE.format(table="__agents_late_answers"))
            ],
            resolved=[aid for (aid,) in rows(_RESOLVED)],
            commits=[
                (cid, CommitResult(first_index=lo, message_count=hi))
                for cid, lo, hi in rows(_COMMITS)
            ],
            outputs=[(OutputRef.model_validate_json(ref), text) for ref, text in rows(_OUTPUTS)],
            compactions=list(rows(_COMPACTIONS)),
        )
    finally:
        with contextlib.suppress(sqlite3.Error):  # gone with a failure already
            db.rollback()


def scoped_maps(db: sqlite3.Connection) -> list[tuple[str, str, JsonObject]]:
    """Every app and user map that holds a key, by scope and owner."""
    maps: dict[tuple[str, str], JsonObject] = {}
    for scope, owner, key, value in db.execute(_MAPS):
        maps.setdefault((scope, owner), {})[key] = json.loads(value)
    return [(scope, owner, values) for (scope, owner), values in maps.items()]
