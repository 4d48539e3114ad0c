"""The public schema helpers: the file a URL names, pending migrations, migrating a file."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from helix_agents.core import ValidationError
from helix_agents.core.errors import MigrationError
from helix_agents.store_sqlite import (
    SQLiteStateStore,
    database_file,
    migrate,
    migration_names,
    pending_migrations,
)

pytestmark = pytest.mark.anyio


def test_database_file_is_the_file_the_store_opens() -> None:
    assert database_file("sqlite:///agent.db") == "agent.db"
    assert database_file("sqlite:////srv/a/agent.db?busy_timeout=2") == "/srv/a/agent.db"
    assert database_file("sqlite:///agent.db", "t1") == "agent.t1.db"
    with pytest.raises(ValidationError):
        database_file("sqlite://host/agent.db")


def test_a_missing_file_lacks_every_migration_and_is_not_created(tmp_path: Path) -> None:
    file = tmp_path / "new.db"
    assert pending_migrations(file) == migration_names()
    assert migration_names()[0] == "0001_initial.sql"
    assert not file.exists()


async def test_migrate_applies_what_is_pending_once(tmp_path: Path) -> None:
    file = tmp_path / "new.db"
    assert migrate(file) == migration_names()
    assert pending_migrations(file) == []
    assert migrate(file) == []
    assert recorded(file) == list(range(1, len(migration_names()) + 1))
    async with SQLiteStateStore(file) as store:  # the store finds its schema complete
        assert (await store.create_session("s")).id == "s"


def recorded(file: Path) -> list[int]:
    with closing(sqlite3.connect(file)) as db:
        rows = db.execute("SELECT version FROM __agents_migrations ORDER BY version").fetchall()
    return [int(v) for (v,) in rows]


def test_a_file_from_a_newer_package_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    file = tmp_path / "newer.db"
    migrate(file)
    with closing(sqlite3.connect(file)) as db:
        db.execute(
            "INSERT INTO __agents_migrations (version, name, checksum) VALUES (999, 'x', '')"
        )
        db.commit()
    before = recorded(file)
    with pytest.raises(MigrationError):
        pending_migrations(file)
    with pytest.raises(MigrationError):
        migrate(file)
    assert recorded(file) == before == [*range(1, len(migration_names()) + 1), 999]
