"""Several OS processes on one SQLite file: EMC-2, IDEM-3 and APR-2 across processes,
a SIGKILL in the middle of a commit, and many processes creating one new file at once.

Each process runs ``sqlite_child.py``; the parent releases them together through
their stdin so their writes race for real.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    PendingApproval,
    StoreUnavailableError,
)
from helix_agents.store_sqlite import SQLiteStateStore
from helix_agents.store_sqlite.schema import shipped_migrations

_T = TypeVar("_T")

CHILD = Path(__file__).with_name("sqlite_child.py")
TIMEOUT = 60


class Child:
    """One ``sqlite_child.py`` process; it has opened the store once :meth:`ready` returns."""

    def __init__(self, action: str, db: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), action, str(db), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self) -> str:
        """The child's next line of output; fails with its stderr if it died."""
        assert self.proc.stdout is not None
        text = self.proc.stdout.readline()
        if not text:
            self.proc.wait(TIMEOUT)
            assert self.proc.stderr is not None
            raise AssertionError(f"child exited {self.proc.returncode}: {self.proc.stderr.read()}")
        return text.strip()

    def ready(self) -> None:
        """Wait until the child has opened the store."""
        assert self.line() == "ready"

    def go(self) -> None:
        """Release the child to do its action."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def outcome(self) -> dict[str, Any]:
        """The action's result; the child must exit cleanly."""
        result: dict[str, Any] = json.loads(self.line())
        assert self.proc.wait(TIMEOUT) == 0
        return result

    def close(self) -> None:
        """Reap the process and its pipes, whatever state it is in."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@contextmanager
def children(action: str, db: Path, count: int, *args: str) -> Iterator[list[Child]]:
    """``count`` children doing ``action``; all reaped on exit."""
    started: list[Child] = []
    try:
        for _ in range(count):
            started.append(Child(action, db, *args))
        yield started
    finally:
        for child in started:
            child.close()


def race(action: str, db: Path, count: int, *args: str) -> list[dict[str, Any]]:
    """Open ``count`` children, release them at once, and return their outcomes."""
    with children(action, db, count, *args) as procs:
        for child in procs:
            child.ready()
        for child in procs:
            child.go()
        return [child.outcome() for child in procs]


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Drive the parent's own store calls."""
    return asyncio.run(coro)


async def new_session(db: Path, rows: int = 0, approvals: int = 0) -> str:
    """A session with ``rows`` user rows and ``approvals`` pending approvals."""
    async with SQLiteStateStore(db) as store:
        sid = (await store.create_session(user_id="u")).id
        if rows:
            messages = tuple(ChatMessage(role="user", content=f"r{i}") for i in range(rows))
            await store.append_messages(sid, MessageCommit(messages=messages))
        await store.add_pending_approvals(
            sid,
            [
                PendingApproval(
                    approval_id=f"ap{i}",
                    tool_name="t",
                    tool_call_id=f"c{i}",
                    input={},
                    requested_at=datetime(2026, 1, 1, tzinfo=UTC),
                )
                for i in range(approvals)
            ],
        )
        return sid


async def contents(db: Path, sid: str) -> tuple[int, list[str]]:
    """The session's count and the text of its rows, read by a fresh store."""
    async with SQLiteStateStore(db) as store:
        rows = await store.get_messages(sid)
        return await store.get_message_count(sid), [str(row.content) for row in rows]


def integrity(db: Path) -> str:
    """SQLite's own verdict on the file."""
    with closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def test_EMC_2_across_processes(tmp_path: Path) -> None:
    db = tmp_path / "emc.db"
    sid = run(new_session(db))
    count = 0
    for round_ in range(3):
        outcomes = race("append", db, 4, sid, str(count), f"round{round_}")
        landed = [o for o in outcomes if o["landed"]]
        assert len(landed) == 1, outcomes
        assert landed[0]["first_index"] == count
        assert all(o["conflict"] for o in outcomes if not o["landed"]), outcomes
        count += 2
        assert run(contents(db, sid))[0] == count


def test_IDEM_3_across_processes(tmp_path: Path) -> None:
    db = tmp_path / "idem.db"
    sid = run(new_session(db, rows=1))
    count = 1
    for round_ in range(3):
        outcomes = race("send-once", db, 4, sid, str(count), f"turn-{round_}")
        assert sorted(o["replayed"] for o in outcomes) == [False, True, True, True], outcomes
        assert all(o["span"] == [count, count + 2] for o in outcomes), outcomes
        count += 2
        assert run(contents(db, sid))[0] == count


def test_APR_2_across_processes(tmp_path: Path) -> None:
    db = tmp_path / "apr.db"
    sid = run(new_session(db, approvals=2))
    for approval_id in ("ap0", "ap1"):
        answers = sorted(o["answer"] for o in race("resolve", db, 4, sid, approval_id))
        assert answers == ["already-resolved"] * 3 + ["resolved"]


def schema(db: Path) -> list[tuple[str, str, str]]:
    """Every table and index of the file with its SQL."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name"
        ).fetchall()
    return [(str(t), str(n), str(q)) for t, n, q in rows]


def test_many_processes_create_one_schema(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    assert race("open", db, 6) == [{"opened": True}] * 6
    reference = tmp_path / "reference.db"
    assert race("open", reference, 1) == [{"opened": True}]
    assert schema(db) == schema(reference)
    assert any(name == "__agents_messages" for _, name, _ in schema(db))
    with closing(sqlite3.connect(db)) as conn:
        recorded = conn.execute("SELECT version, checksum FROM __agents_migrations").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert recorded == [(m.version, m.checksum) for m in shipped_migrations()]
    assert mode == "wal"
    assert integrity(db) == "ok"


def test_sigkill_mid_commit_leaves_none_of_it(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    sid = run(new_session(db, rows=3))
    before = run(contents(db, sid))
    # ~3 MB of rows: more than SQLite's page cache, so uncommitted pages reach the WAL file.
    with children("stall-commit", db, 1, sid, "3000", "1000") as (child,):
        child.ready()
        child.go()
        assert child.line() == "mid-commit"
        assert db.with_name(db.name + "-wal").stat().st_size > 1_000_000
        # The child holds the write lock: readers go on, another writer times out.
        assert run(contents(db, sid)) == before
        with pytest.raises(StoreUnavailableError) as caught:
            run(_append(db, sid, "blocked", busy_timeout=0.2))
        assert not caught.value.may_have_landed
        child.proc.send_signal(signal.SIGKILL)
        assert child.proc.wait(TIMEOUT) == -signal.SIGKILL
    assert run(contents(db, sid)) == before
    assert integrity(db) == "ok"
    run(_append(db, sid, "after"))
    count, texts = run(contents(db, sid))
    assert (count, texts) == (4, [*before[1], "after"])


def test_sigkill_during_commits_keeps_whole_commits(tmp_path: Path) -> None:
    db = tmp_path / "loop.db"
    sid = run(new_session(db))
    reported: list[str] = []
    for attempt, delay in enumerate((0.0, 0.013, 0.031)):
        with children("commit-loop", db, 1, sid, "50", f"c{attempt}") as (child,):
            child.ready()
            child.go()
            reported.append(json.loads(child.line())["landed"])
            time.sleep(delay)
            child.proc.send_signal(signal.SIGKILL)
            child.proc.wait(TIMEOUT)
            assert child.proc.stdout is not None
            reported += [json.loads(line)["landed"] for line in child.proc.stdout]
    count, texts = run(contents(db, sid))
    assert integrity(db) == "ok"
    assert count == len(texts) and count % 50 == 0
    tags = [text.split(":")[0] for text in texts]
    for start in range(0, count, 50):
        assert len(set(tags[start : start + 50])) == 1, f"the commit at row {start} is partial"
    # Every commit a child saw return is there (it may have landed more before dying).
    assert set(reported) <= set(tags)
    run(_append(db, sid, "after"))
    assert run(contents(db, sid))[0] == count + 1


async def _append(db: Path, sid: str, text: str, busy_timeout: float = 5.0) -> None:
    async with SQLiteStateStore(db, busy_timeout=busy_timeout) as store:
        commit = MessageCommit(messages=(ChatMessage(role="user", content=text),))
        await store.append_messages(sid, commit)
