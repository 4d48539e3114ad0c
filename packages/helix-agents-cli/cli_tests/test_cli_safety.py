"""What the command does around the data: read commands change nothing, a closed pipe
is no error, ``--version``, and errors in the command line's terms."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from helix_agents.core import ChatMessage, MessageCommit, open_store

from .conftest import HELIX_STORE, Helix, with_option

pytestmark = pytest.mark.anyio

READS = [
    ("show", "s"),
    ("sessions", "--user", "u"),
    ("stats", "s"),
    ("export", "s"),
    ("delete", "s", "--yes"),  # finds its sessions on a read-only store first
]


@pytest.mark.parametrize("args", READS, ids=[a[0] for a in READS])
def test_a_mistyped_sqlite_path_is_an_error_and_creates_nothing(
    helix: Helix, tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = helix(args[0], f"sqlite:///{tmp_path / 'typo.db'}", *args[1:])
    assert done.code == 2 and done.out == ""
    assert "no such database file" in done.err and done.err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_commands_leave_a_sqlite_file_as_it_was(
    helix: Helix, tmp_path: Path, sqlite_url: str
) -> None:
    assert helix("demo", sqlite_url).code == 0
    db = tmp_path / "store.db"
    before = _digest(db)
    for args in (
        ("show", sqlite_url, "demo-trip"),
        ("sessions", sqlite_url, "--user", "demo-user"),
        ("stats", sqlite_url, "demo-trip"),
        ("export", sqlite_url, "demo-trip"),
    ):
        done = helix(*args)
        assert done.code == 0, done.err
    assert _digest(db) == before


def test_a_sqlite_file_without_the_schema_is_not_migrated_by_a_read(
    helix: Helix, tmp_path: Path
) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
    url = f"sqlite:///{db}"
    done = helix("show", url, "s")
    assert done.code == 5 and "state_migration" in done.err
    assert f"run `helix-store migrate {url}`" in done.err
    with sqlite3.connect(db) as conn:
        assert [n for (n,) in conn.execute("SELECT name FROM sqlite_master")] == ["t"]


def test_the_migration_hint_is_the_commands(helix: Helix, pg_url: str) -> None:
    done = helix("sessions", pg_url, "--user", "u")
    assert done.code == 5 and "state_migration" in done.err
    assert "`helix-store migrate postgresql://" in done.err
    assert "await store.migrate()" not in done.err and "auto_migrate" not in done.err


def test_namespace_in_a_postgres_url_is_the_schema(
    helix: Helix, pg_server: str, pg_url: str
) -> None:
    schema = pg_url.rpartition("schema=")[2]
    migrated = helix("migrate", with_option(pg_server, "namespace", schema))
    assert migrated.code == 0, migrated.err
    listed = helix("sessions", pg_url, "--user", "u", "--json")
    assert listed.code == 0, listed.err


@pytest.mark.parametrize(
    "option",
    ["socket_timeout=abc", "no_such_option=1", "socket_keepalive=maybe", "protocol=9"],
)
def test_redis_option_errors_are_usage_errors(helix: Helix, redis_url: str, option: str) -> None:
    name, _, value = option.partition("=")
    done = helix("sessions", with_option(redis_url, name, value), "--user", "u")
    assert done.code == 2 and "[validation_error]" in done.err
    assert done.err.count("\n") == 1 and name in done.err
    assert "TypeError" not in done.err and "__init__" not in done.err


def test_version(helix: Helix) -> None:
    done = helix("--version")
    assert done.code == 0 and done.err == ""
    assert done.out == f"helix-store {importlib.metadata.version('helix-agents-cli')}\n"


async def _big_session(url: str) -> None:
    async with open_store(url) as store:
        await store.create_session("big", user_id="u")
        for _ in range(4):
            rows = tuple(ChatMessage(role="user", content="x" * 200) for _ in range(500))
            await store.append_messages("big", MessageCommit(messages=rows))


def _first_line_then_close(*args: str) -> tuple[bytes, int, bytes]:
    """Run the command into a real pipe, read one line, close the pipe (``| head -1``)."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    with subprocess.Popen(
        [str(HELIX_STORE), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        return line, proc.wait(timeout=60), err


async def test_a_closed_pipe_ends_quietly_with_exit_0(sqlite_url: str) -> None:
    # ~500 kB of output: far more than a pipe holds, so the writer meets the closed end.
    await _big_session(sqlite_url)
    for args in (
        ("export", sqlite_url, "big"),
        ("show", sqlite_url, "big", "--first", "500", "--json"),
    ):
        line, code, err = _first_line_then_close(*args)
        assert line and (code, err) == (0, b""), (args, err.decode())
