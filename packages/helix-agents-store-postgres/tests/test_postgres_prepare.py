"""Prepared statements: ``prepare=auto|on|off`` on psycopg's public API, the fallbacks."""

from __future__ import annotations

import logging
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import ChatMessage, MessageCommit, open_store
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

pytestmark = pytest.mark.anyio

ONE_CONNECTION = PoolSettings(min_size=1, max_size=1, timeout=10.0)
Factory = Callable[..., PostgresStateStore]


async def _prepared(store: PostgresStateStore) -> list[str]:
    """The names prepared on the (single) connection of the store's pool."""
    return [name for name, _ in await _statements(store)]


async def _statements(store: PostgresStateStore) -> list[tuple[str, str]]:
    """``(name, statement)`` of each statement prepared on that connection, by name."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT name, statement FROM pg_prepared_statements ORDER BY name", prepare=False
        )
        return [(str(name), str(text)) for name, text in await cur.fetchall()]


def _stores(statements: list[tuple[str, str]], schema: str) -> set[str]:
    """The texts of the statements the store sent (they name its schema)."""
    return {text for _, text in statements if schema in text}


async def _work(store: PostgresStateStore, session_id: str = "s") -> None:
    """A session, two commits and the reads that check them."""
    await store.create_session(session_id)
    for n in range(2):
        await store.append_messages(
            session_id,
            MessageCommit(
                messages=(ChatMessage(role="user", content=f"m{n}"),), expect_message_count=n
            ),
        )
    rows = await store.get_messages(session_id)
    assert [getattr(m, "content", None) for m in rows] == ["m0", "m1"]
    assert await store.get_message_count(session_id) == 2


async def test_auto_prepares_the_store_statements_on_its_own_pool(
    open_store: Factory, migrated: str
) -> None:
    """``auto`` (the default) prepares the store's statements on its own connections, the
    same statements for every store."""
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        assert store.prepare == "auto" and store.prepared_statements
        await _work(store)
        prepared = _stores(await _statements(store), migrated)
        assert len(prepared) == 3  # create, snapshot, apply
        assert store.prepared_statements
    async with open_store(pool_settings=ONE_CONNECTION) as again:
        await _work(again, "t")
        assert _stores(await _statements(again), migrated) == prepared


async def test_off_prepares_nothing(pg_url: str, migrated: str) -> None:
    """``prepare=off`` (here from the URL) sends every statement unprepared."""
    store = open_store(f"{pg_url}?prepare=off&min_size=1&max_size=1", namespace=migrated)
    assert isinstance(store, PostgresStateStore)
    async with store:
        assert (store.prepare, store.prepared_statements) == ("off", False)
        await _work(store)
        assert await _prepared(store) == []


async def test_an_application_pool_is_prepared_only_with_on(pg_url: str, migrated: str) -> None:
    """``auto`` leaves an application's connections alone; ``on`` prepares the store's
    statements there too (psycopg's per-call ``prepare=True``), beside the application's own
    prepared statements."""
    async with AsyncConnectionPool(pg_url, min_size=1, max_size=1, open=False) as pool:
        async with pool.connection() as conn:
            threshold = conn.prepare_threshold
        async with PostgresStateStore(pool=pool, schema=migrated) as store:
            assert not store.prepared_statements
            await _work(store)
            assert await _prepared(store) == []
        async with pool.connection() as conn:
            await conn.execute("SELECT %s::int", (1,), prepare=True)
        async with PostgresStateStore(pool=pool, schema=migrated, prepare="on") as store:
            assert store.prepared_statements
            await _work(store, "t")
            statements = await _statements(store)
            assert any(text == "SELECT $1::int" for _, text in statements)
            assert len(_stores(statements, migrated)) == 3
        async with pool.connection() as conn:  # the application's statement still runs prepared
            cur = await conn.execute("SELECT %s::int", (2,), prepare=True)
            assert await cur.fetchone() == (2,)
            assert conn.prepare_threshold == threshold  # the store changed no setting


async def test_on_with_a_pool_that_never_prepares_prepares_nothing(
    pg_url: str, migrated: str
) -> None:
    """An application connection with ``prepare_threshold=None`` stays unprepared."""
    async with (
        AsyncConnectionPool(
            pg_url, min_size=1, max_size=1, kwargs={"prepare_threshold": None}, open=False
        ) as pool,
        PostgresStateStore(pool=pool, schema=migrated, prepare="on") as store,
    ):
        await _work(store)
        assert await _prepared(store) == []


async def test_a_refused_name_stops_preparing_and_retries_unprepared(
    open_store: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    """26000 (the server lost the statement, as behind an older PgBouncer): one warning, the
    write is retried once unprepared and lands once, and the store prepares no more."""
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        await _work(store)
        async with store.pool.connection() as conn:
            conn.pgconn.exec_(b"DEALLOCATE ALL")  # behind psycopg's back
        with caplog.at_level(logging.WARNING, logger="helix_agents.store_postgres"):
            result = await store.append_messages(
                "s", MessageCommit(messages=(ChatMessage(role="user", content="m2"),))
            )
            assert await store.get_message_count("s") == 3
        assert result.message_count == 3
        assert not store.prepared_statements
        refused = [r for r in caplog.records if "prepares no more" in r.getMessage()]
        assert len(refused) == 1 and "26000" in refused[0].getMessage()
        await _work(store, "t")
        assert await _prepared(store) == []


async def test_a_taken_name_stops_preparing_and_retries_unprepared(open_store: Factory) -> None:
    """42P05 (another client prepared the name on this server connection): the same."""
    async with open_store(pool_settings=ONE_CONNECTION) as first:
        await _work(first)
        names = await _prepared(first)
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        async with store.pool.connection() as conn:
            for name in names:
                conn.pgconn.exec_(f"PREPARE {name} AS SELECT 1".encode())
        await _work(store, "t")
        assert not store.prepared_statements


async def test_a_plan_made_stale_by_a_migration_discards_the_connection(
    open_store: Factory, pg_url: str, migrated: str
) -> None:
    """0A000 "cached plan must not change result type" (here: a column of the listing's
    result changes type): the connection goes, the read is retried once on a new one, and
    the store goes on preparing."""
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        await store.create_session("s", user_id="u")
        assert len((await store.list_sessions("u")).sessions) == 1
        async with store.pool.connection() as conn:
            before = conn.info.backend_pid
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin:
            await admin.execute(
                sql.SQL(
                    "ALTER TABLE {}.__agents_sessions"
                    " ALTER COLUMN created_at TYPE timestamp(3) with time zone"
                ).format(sql.Identifier(migrated))
            )
        assert len((await store.list_sessions("u")).sessions) == 1
        async with store.pool.connection() as conn:
            assert conn.info.backend_pid != before
        assert store.prepared_statements


async def test_through_pgbouncer_with_its_setting_every_call_lands(
    pgbouncer_url: str, pgbouncer_prepare: str, store_on: Factory
) -> None:
    """Through a PgBouncer in transaction mode, with the ``prepare`` the docs give for its
    version (``off`` before 1.21), two stores on one schema get right answers."""
    async with (
        store_on(pgbouncer_url, prepare=pgbouncer_prepare) as a,
        store_on(pgbouncer_url, prepare=pgbouncer_prepare) as b,
    ):
        for n in range(3):
            await _work(a, f"a{n}")
            await _work(b, f"b{n}")
        assert a.prepared_statements == b.prepared_statements == (pgbouncer_prepare == "auto")
