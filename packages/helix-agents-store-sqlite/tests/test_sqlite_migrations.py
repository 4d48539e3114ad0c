"""Versioned migrations: applied once with checksums; changed or unknown versions refused."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from helix_agents.core.errors import MigrationError
from helix_agents.store_sqlite import SQLiteStateStore, _connection
from helix_agents.store_sqlite.schema import Migration, shipped_migrations

pytestmark = pytest.mark.anyio


def recorded(db: Path) -> list[tuple[int, str, str]]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT version, name, checksum FROM __agents_migrations ORDER BY version"
        ).fetchall()
    return [(int(v), str(n), str(c)) for v, n, c in rows]


def tables(db: Path) -> set[str]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(name) for (name,) in rows}


def test_shipped_migrations_are_numbered_from_one() -> None:
    migrations = shipped_migrations()
    assert [m.version for m in migrations] == list(range(1, len(migrations) + 1))
    assert migrations[0].name == "0001_initial.sql"


def test_statements_split_on_semicolons_outside_comments_and_strings() -> None:
    sql = "-- a; comment\nCREATE TABLE t (x TEXT DEFAULT 'a;b');\nINSERT INTO t VALUES ('c');\n"
    assert Migration(9, "0009_x.sql", sql).statements() == [
        "-- a; comment\nCREATE TABLE t (x TEXT DEFAULT 'a;b');",
        "INSERT INTO t VALUES ('c');",
    ]


async def test_new_file_records_every_migration(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    async with SQLiteStateStore(db):
        pass
    assert recorded(db) == [(m.version, m.name, m.checksum) for m in shipped_migrations()]
    assert {"__agents_sessions", "__agents_messages", "__agents_migrations"} <= tables(db)
    async with SQLiteStateStore(db):
        pass
    assert len(recorded(db)) == len(shipped_migrations())


async def test_missing_versions_are_applied_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "upgrade.db"
    async with SQLiteStateStore(db) as store:
        sid = (await store.create_session()).id
    step = Migration(len(shipped_migrations()) + 1, "9999_extra.sql", "CREATE TABLE __x (a);\n")
    monkeypatch.setattr(_connection, "shipped_migrations", lambda: [*shipped_migrations(), step])
    async with SQLiteStateStore(db) as store:
        assert await store.get_session(sid) is not None
    assert recorded(db)[-1] == (step.version, step.name, step.checksum)
    assert "__x" in tables(db)


async def test_changed_migration_refuses_to_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "changed.db"
    async with SQLiteStateStore(db):
        pass
    before = recorded(db)
    first, *rest = shipped_migrations()
    edited = Migration(first.version, first.name, first.sql + "\n-- edited after release\n")
    monkeypatch.setattr(_connection, "shipped_migrations", lambda: [edited, *rest])
    with pytest.raises(MigrationError, match="was changed after it was applied") as caught:
        async with SQLiteStateStore(db):
            pytest.fail("opened a database whose migration changed")
    assert caught.value.code == "state_migration"
    assert first.name in str(caught.value)
    assert recorded(db) == before


async def test_unknown_newer_version_refuses_to_open(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    async with SQLiteStateStore(db):
        pass
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO __agents_migrations (version, name, checksum) VALUES (?, ?, ?)",
            (999, "0999_future.sql", "0" * 64),
        )
    before = recorded(db)
    with pytest.raises(MigrationError, match="schema version 999, newer") as caught:
        async with SQLiteStateStore(db):
            pytest.fail("opened a database from a newer package")
    assert not caught.value.retryable
    assert recorded(db) == before
