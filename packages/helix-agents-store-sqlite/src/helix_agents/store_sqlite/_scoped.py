"""Scoped state on SQLite (docs/scoped-state.md): one row per key, in the commit's transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from helix_agents.core import JsonObject

from ._rows import load_session

__all__ = ["apply", "drop_session_map", "read"]


def apply(db: sqlite3.Connection, changes: Mapping[tuple[str, str], Mapping[str, Any]]) -> None:
    """Upsert every key of a checked plan's folded deltas."""
    db.executemany(
        "INSERT INTO __agents_scoped_state (scope, owner, key, value) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (scope, owner, key) DO UPDATE SET value = excluded.value",
        [
            (scope, owner, key, json.dumps(value, ensure_ascii=False))
            for (scope, owner), keys in changes.items()
            for key, value in keys.items()
        ],
    )


def drop_session_map(db: sqlite3.Connection, sid: str) -> None:
    """Forget the session's own map (delete and clear; SCS-4)."""
    db.execute("DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = ?", (sid,))


def read(db: sqlite3.Connection, scope: str, owner: str) -> JsonObject:
    """The ``(scope, owner)`` map; a ``session`` owner must exist."""
    if scope == "session":
        load_session(db, owner)
    found = db.execute(
        "SELECT key, value FROM __agents_scoped_state WHERE scope = ? AND owner = ?",
        (scope, owner),
    ).fetchall()
    return {key: json.loads(value) for key, value in found}
