"""The hot path never scans: each statement of a turn or a checkpoint page searches an index.

A turn (append with an expected count, then the last 20 rows) runs on a long
session while SQLite's trace hook records each statement; each one's query
plan must search an index, so its cost follows the rows it touches, not the
length of the session. The hooks are white-box access to the engine's own
connections.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    MessageCommit,
    StoredContextItem,
)
from helix_agents.store_sqlite import SQLiteEngine, SQLiteStateStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def long_session(tmp_path: Path) -> AsyncIterator[tuple[SQLiteStateStore, str]]:
    async with SQLiteStateStore(tmp_path / "long.db", max_messages=4000) as store:
        sid = (await store.create_session(user_id="u")).id
        for other in range(3):
            await store.create_session(f"other-{other}", user_id="u")
        rows = tuple(ChatMessage(role="user", content=f"row {i}") for i in range(500))
        for _ in range(10):
            await store.append_messages(sid, MessageCommit(messages=rows))
        yield store, sid


async def traced(store: SQLiteStateStore, statements: list[str]) -> None:
    engine = store.engine
    assert isinstance(engine, SQLiteEngine)
    for conn in (engine._writer, engine._reader):
        assert conn is not None and conn._db is not None
        await conn._hop(conn._db.set_trace_callback, statements.append)
    # The event loop thread's connection, where reads run first.
    assert engine._inline is not None
    engine._inline._conn.set_trace_callback(statements.append)


def plans(db: str, statements: list[str]) -> dict[str, list[str]]:
    found = {}
    with closing(sqlite3.connect(db)) as conn:
        for sql in statements:
            if sql.split()[0].upper() in ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"):
                continue
            rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            found[sql] = [str(row[-1]) for row in rows]
    return found


def assert_no_scan(found: dict[str, list[str]]) -> None:
    assert found
    for sql, steps in found.items():
        # Scanning json_each walks the keys a statement was given, not a table.
        scans = [s for s in steps if s.startswith("SCAN") and "json_each" not in s]
        assert not scans, f"{sql!r} scans: {steps}"


async def test_turn_statements_search_indexes(
    long_session: tuple[SQLiteStateStore, str],
) -> None:
    store, sid = long_session
    await store.record_context_item(
        sid,
        StoredContextItem(
            key="k",
            item=ContextItem(kind="instruction", content="c"),
            at=datetime(2026, 1, 1, tzinfo=UTC),
        ),
    )
    statements: list[str] = []
    await traced(store, statements)
    count = await store.get_message_count(sid)
    commit = MessageCommit(
        messages=(
            ChatMessage(role="user", content="u"),
            ContextMessage(kind="instruction", content="c"),
        ),
        expect_message_count=count,
        deliver_context_items=(ContextItemDelivery(key="k", row_offset=1),),
        commit_id="turn-1",
    )
    await store.append_messages(sid, commit)
    plain = MessageCommit(messages=commit.messages[:1], expect_message_count=count + 2)
    await store.append_messages(sid, plain)
    assert len(await store.get_messages(sid, limit=20)) == 20
    await store.page_messages(sid, limit=20, order="desc")
    await store.list_sessions("u", first=2)
    await store.truncate_messages(sid, count + 1)
    assert any("INSERT INTO __agents_messages" in s for s in statements)
    assert any(s.startswith("UPDATE __agents_sessions SET version") for s in statements)
    assert_no_scan(plans(store.path, statements))


async def test_checkpoint_pages_and_deletes_search_the_primary_key(
    long_session: tuple[SQLiteStateStore, str],
) -> None:
    store, sid = long_session
    for i in range(300):
        await store.save_checkpoint(
            sid,
            Checkpoint(
                checkpoint_id=f"c\x1f{i:05d}",
                run_id="r",
                message_count=0,
                state={"i": i},
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            ),
        )
    statements: list[str] = []
    await traced(store, statements)
    page = await store.page_checkpoints(sid, prefix="c\x1f", limit=10)
    assert [c.checkpoint_id for c in page][:2] == ["c\x1f00299", "c\x1f00298"]
    await store.page_checkpoints(sid, prefix="c\x1f", before="c\x1f00100", limit=10)
    await store.page_checkpoints(sid, limit=10)
    assert await store.delete_checkpoints(sid, ["c\x1f00001", "c\x1f00002"]) == 2
    assert any("ORDER BY checkpoint_id DESC" in s for s in statements)
    assert_no_scan(plans(store.path, statements))


async def test_plain_append_and_listing_statements(tmp_path: Path) -> None:
    """A plain append reads the session row under the write lock (the version guard),
    inserts its rows and writes the row back, nothing more; a listing page is one
    statement; a tail read two (docs/backends/sqlite.md)."""
    async with SQLiteStateStore(tmp_path / "count.db") as store:
        sid = (await store.create_session(user_id="u")).id
        await store.get_message_count(sid)  # the store now knows the session's head
        statements: list[str] = []
        await traced(store, statements)
        rows = (ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="b"))
        await store.append_messages(sid, MessageCommit(messages=rows, expect_message_count=0))
        verbs = [sql.split()[0].upper() for sql in statements]
        assert verbs == ["BEGIN", "SELECT", "INSERT", "INSERT", "UPDATE", "COMMIT"]
        assert statements[0] == "BEGIN IMMEDIATE"
        statements.clear()
        page = await store.list_sessions("u")
        assert [s.id for s in page.sessions] == [sid]
        assert [sql.split()[0] for sql in statements] == ["SELECT"]
        statements.clear()
        assert len(await store.get_messages(sid, limit=1)) == 1
        # The head, then the rows at the head's version: no transaction to begin or end.
        assert [sql.split()[0] for sql in statements] == ["SELECT", "SELECT"]
