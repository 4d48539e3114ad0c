"""The SQLite engine against core's reference on generated sequences: every result and error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helix_agents.contract.differential import run_differential
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_sqlite import SQLiteStateStore


def test_sqlite_matches_core_on_generated_sequences(tmp_path: Path) -> None:
    """Each operation's result or error (class, code, message) equals the memory store's,
    and so does everything the session holds afterwards, context store included."""

    def factory(**options: Any) -> SQLiteStateStore:
        return SQLiteStateStore(tmp_path / "diff.db", **options)

    assert run_differential(factory, MemoryStateStore) > 0
