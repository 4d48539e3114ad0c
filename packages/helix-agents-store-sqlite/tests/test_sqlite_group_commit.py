"""Group commit: writes that queue while the writer is busy share one transaction.

The writer's thread is held on a gate (a plain call of its own queue) while the
writes queue behind it, so each test knows exactly which writes form a batch;
SQLite's trace hook on the writer's connection counts the transactions. The
hooks are white-box access to the engine's own connection (docs/backends/sqlite.md,
"Group commit").
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StoreUnavailableError,
)
from helix_agents.core.backend import Refused
from helix_agents.store_sqlite import SQLiteEngine, SQLiteStateStore
from helix_agents.store_sqlite._config import SQLiteConfig
from helix_agents.store_sqlite._connection import BATCH, Connection

pytestmark = pytest.mark.anyio


async def trace(conn: Connection) -> list[str]:
    """Every statement the connection runs from now on, in order."""
    statements: list[str] = []
    assert conn._db is not None
    await conn._hop(conn._db.set_trace_callback, statements.append)
    return statements


def verbs(statements: list[str], verb: str) -> int:
    return sum(s.split()[0].upper() == verb for s in statements)


async def held(conn: Connection, *calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``calls`` while the writer's thread is held, so all of their writes are queued
    before it takes the first: their results, or exceptions, in order."""
    entered, gate = threading.Event(), threading.Event()

    def hold() -> None:
        entered.set()
        gate.wait()

    blocker = asyncio.ensure_future(conn._hop(hold))
    assert await asyncio.to_thread(entered.wait, 5)
    tasks = [asyncio.ensure_future(call()) for call in calls]
    try:
        for _ in range(5000):
            if conn._calls.qsize() >= len(calls):
                break
            await asyncio.sleep(0.001)
        assert conn._calls.qsize() == len(calls)
    finally:
        gate.set()
    await blocker
    return await asyncio.gather(*tasks, return_exceptions=True)


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[Connection]:
    conn = Connection(SQLiteConfig(str(tmp_path / "g.db"), synchronous="FULL"), writer=True)
    await conn.open()
    await conn.run(lambda db: db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)"))
    try:
        yield conn
    finally:
        await conn.close()


def numbers(conn: Connection) -> Callable[[], Awaitable[list[int]]]:
    async def read() -> list[int]:
        rows = await conn.run(lambda db: db.execute("SELECT n FROM t ORDER BY n").fetchall())
        return [n for (n,) in rows]

    return read


def insert(n: int, then: Callable[[sqlite3.Connection], Any] | None = None) -> Any:
    def work(db: sqlite3.Connection) -> Any:
        db.execute("INSERT INTO t VALUES (?)", (n,))
        return n if then is None else then(db)

    return work


def boom(db: sqlite3.Connection) -> None:
    raise RuntimeError("the write's own bug")


def bad_sql(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO missing VALUES (1)")


async def test_queued_writes_share_one_commit(writer: Connection) -> None:
    statements = await trace(writer)
    got = await held(writer, *(lambda n=n: writer.run(insert(n)) for n in range(16)))
    assert got == list(range(16))
    assert verbs(statements, "COMMIT") == 1
    assert verbs(statements, "SAVEPOINT") == 16
    assert await numbers(writer)() == list(range(16))


async def test_refused_or_failing_write_rolls_back_alone(writer: Connection) -> None:
    statements = await trace(writer)
    refusal = Refused(None)
    got = await held(
        writer,
        lambda: writer.run(insert(1)),
        lambda: writer.run(insert(2, lambda db: refusal)),
        lambda: writer.run(insert(3, boom)),
        lambda: writer.run(insert(4, bad_sql)),
        lambda: writer.run(insert(5, lambda db: db.execute("SELECT n FROM t").fetchall())),
    )
    assert got[0] == 1
    assert got[1] is refusal
    assert isinstance(got[2], RuntimeError) and str(got[2]) == "the write's own bug"
    assert isinstance(got[3], StoreUnavailableError) and not got[3].may_have_landed
    assert "no such table: missing" in str(got[3])
    # Write 5 saw write 1 and its own row, nothing the rolled-back writes inserted.
    assert got[4] == [(1,), (5,)]
    assert verbs(statements, "COMMIT") == 1
    assert await numbers(writer)() == [1, 5]


async def test_failed_commit_fails_every_kept_write(writer: Connection) -> None:
    assert writer._db is not None
    await writer._hop(writer._db.execute, "PRAGMA foreign_keys = ON")
    await writer.run(
        lambda db: db.execute(
            "CREATE TABLE child (p INTEGER REFERENCES t (n) DEFERRABLE INITIALLY DEFERRED)"
        )
    )
    orphan = "INSERT INTO child VALUES (99)"  # checked at COMMIT: the whole batch fails
    got = await held(
        writer,
        lambda: writer.run(insert(1)),
        lambda: writer.run(insert(2, boom)),
        lambda: writer.run(lambda db: db.execute(orphan).rowcount),
        lambda: writer.run(lambda db: Refused(None)),
    )
    assert isinstance(got[1], RuntimeError)  # rolled back before: its own outcome
    for failed in (got[0], got[2], got[3]):
        assert isinstance(failed, StoreUnavailableError), failed
        assert failed.may_have_landed and "commit failed" in str(failed)
    assert await numbers(writer)() == []
    assert writer._db is not None and not writer._db.in_transaction
    assert await writer.run(insert(7)) == 7  # the writer goes on


async def test_lone_writes_stay_alone_and_batches_are_bounded(writer: Connection) -> None:
    statements = await trace(writer)
    got = await held(
        writer,
        lambda: writer.run(insert(1)),
        lambda: writer.run(insert(2), alone=True),
        lambda: writer.run(insert(3)),
        lambda: writer.run(insert(4)),
    )
    assert got == [1, 2, 3, 4]
    # 1 alone (the next is alone), 2 alone, then 3 and 4 together.
    assert verbs(statements, "COMMIT") == 3
    assert verbs(statements, "SAVEPOINT") == 2
    statements.clear()
    many = BATCH + 6
    got = await held(writer, *(lambda n=n: writer.run(insert(100 + n)) for n in range(many)))
    assert got == [100 + n for n in range(many)]
    assert verbs(statements, "COMMIT") == 2
    assert len(await numbers(writer)()) == 4 + many


def _writer_of(store: SQLiteStateStore) -> Connection:
    engine = store.engine
    assert isinstance(engine, SQLiteEngine) and engine._writer is not None
    return engine._writer


def _rows(turn: int) -> tuple[ChatMessage, ...]:
    return (
        ChatMessage(role="user", content=f"question {turn}"),
        ChatMessage(role="assistant", content=f"answer {turn}"),
    )


async def test_sixteen_sessions_commit_together_at_full(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "s.db", synchronous="FULL") as store:
        sids = [f"s{i:02d}" for i in range(16)]
        for sid in sids:
            await store.create_session(sid, user_id="u")
        writer = _writer_of(store)
        statements = await trace(writer)
        for turn in range(3):
            await asyncio.gather(
                *(
                    store.append_messages(
                        sid, MessageCommit(messages=_rows(turn), expect_message_count=2 * turn)
                    )
                    for sid in sids
                )
            )
        # 48 commits; fewer transactions (the first commit of a round runs alone while
        # the others queue behind it, so at least two per round, far below 48).
        assert verbs(statements, "COMMIT") < 16
        for sid in sids:
            got = await store.get_messages(sid)
            assert [m.content for m in got] == [
                text for turn in range(3) for text in (f"question {turn}", f"answer {turn}")
            ]


async def test_same_session_in_one_batch_is_refused_and_planned_again(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "r.db") as store:
        await store.create_session("a", user_id="u")
        await store.create_session("b", user_id="u")
        writer = _writer_of(store)
        statements = await trace(writer)
        # Both commits on "a" are planned from the same head: the second is refused by
        # the version guard inside the batch, rolls back alone, and lands next time.
        got = await held(
            writer,
            lambda: store.append_messages("a", MessageCommit(messages=_rows(0))),
            lambda: store.append_messages("a", MessageCommit(messages=_rows(1))),
            lambda: store.append_messages("b", MessageCommit(messages=_rows(2))),
        )
        assert not any(isinstance(g, BaseException) for g in got), got
        assert verbs(statements, "COMMIT") == 2
        assert [m.content for m in await store.get_messages("a")] == [
            "question 0",
            "answer 0",
            "question 1",
            "answer 1",
        ]
        assert [m.content for m in await store.get_messages("b")] == ["question 2", "answer 2"]


async def test_a_failing_write_does_not_poison_its_batch(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "p.db") as store:
        for sid in ("a", "c"):
            await store.create_session(sid, user_id="u")
        engine = store.engine
        assert isinstance(engine, SQLiteEngine)
        writer = _writer_of(store)
        statements = await trace(writer)

        # A write of the engine's that fails in SQLite after it wrote, between two commits.
        def failing(db: sqlite3.Connection) -> None:
            db.execute("UPDATE __agents_sessions SET message_count = 999")
            db.execute("INSERT INTO missing VALUES (1)")

        got = await held(
            writer,
            lambda: store.append_messages("a", MessageCommit(messages=_rows(0))),
            lambda: engine._write(failing),
            lambda: store.append_messages("c", MessageCommit(messages=_rows(1))),
        )
        assert isinstance(got[1], StoreUnavailableError) and not got[1].may_have_landed
        assert not isinstance(got[0], BaseException) and not isinstance(got[2], BaseException)
        assert verbs(statements, "COMMIT") == 1
        assert verbs(statements, "SAVEPOINT") == 3
        assert await store.get_message_count("a") == 2
        assert await store.get_message_count("c") == 2
        session = await store.get_session("a")
        assert session is not None and session.message_count == 2
