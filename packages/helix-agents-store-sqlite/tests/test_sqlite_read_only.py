"""``?mode=ro`` / ``read_only=True``: an existing, migrated file, read and never written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helix_agents.core import ChatMessage, MessageCommit, ValidationError, open_store
from helix_agents.core.errors import MigrationError
from helix_agents.store_sqlite import SQLiteStateStore, open_url

pytestmark = pytest.mark.anyio


def _rows(path: Path) -> list[tuple[str, int]]:
    """The sessions and their row counts, read around the store."""
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT session_id, message_count FROM __agents_sessions"))


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


async def test_a_missing_file_is_refused_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(ValidationError, match="no such database file"):
        async with open_store(f"sqlite:///{path}?mode=ro"):
            pytest.fail("opened a file that does not exist")
    assert _files(tmp_path) == []


async def test_reads_work_and_every_write_is_refused(tmp_path: Path) -> None:
    # A name URIs must escape: the read-only open goes through a file: URI.
    path = tmp_path / "a b?#%.db"
    async with SQLiteStateStore(path) as store:
        await store.create_session("s", user_id="u")
        await store.append_messages(
            "s", MessageCommit(messages=(ChatMessage(role="user", content="hi"),))
        )
    before = _rows(path)
    async with SQLiteStateStore(path, read_only=True) as store:
        assert [m.content for m in await store.get_messages("s")] == ["hi"]
        assert [s.id for s in (await store.list_sessions("u")).sessions] == ["s"]
        for write in (
            store.create_session("t"),
            store.append_messages(
                "s", MessageCommit(messages=(ChatMessage(role="user", content="x"),))
            ),
            store.delete_session("s"),
            store.migrate(),
        ):
            with pytest.raises(ValidationError, match="read-only"):
                await write
    assert _rows(path) == before == [("s", 1)]


async def test_a_file_lacking_migrations_is_not_migrated(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(MigrationError, match="0001_initial"):
        async with open_url(f"sqlite:///{path}?mode=ro"):
            pytest.fail("opened a file without the schema")
    with sqlite3.connect(path) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert tables == {"t"}


def test_mode_option_values(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/a.db"
    assert open_url(f"{url}?mode=ro").config.read_only is True
    assert open_url(f"{url}?mode=rwc").config.read_only is False
    assert open_url(f"{url}?mode=ro", read_only=False).config.read_only is False
    with pytest.raises(ValidationError, match="mode"):
        open_url(f"{url}?mode=rw")
    with pytest.raises(ValidationError, match="read_only"):
        SQLiteStateStore(tmp_path / "a.db", read_only="yes")  # type: ignore[arg-type]
