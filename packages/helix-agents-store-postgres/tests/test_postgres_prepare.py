"""Prepared statements: ``prepare=auto|on|off``, their names, the fallbacks, the guard."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

import psycopg
import psycopg._preparing
import pytest
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    SessionNotFoundError,
    StoreMisconfiguredError,
    open_store,
)
from helix_agents.store_postgres import PoolSettings, PostgresStateStore
from helix_agents.store_postgres._prepare import statement_name

pytestmark = pytest.mark.anyio

ONE_CONNECTION = PoolSettings(min_size=1, max_size=1, timeout=10.0)
Factory = Callable[..., PostgresStateStore]


async def _prepared(store: PostgresStateStore) -> list[str]:
    """The names prepared on the (single) connection of the store's pool."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT name FROM pg_prepared_statements ORDER BY name", prepare=False
        )
        return [name for (name,) in await cur.fetchall()]


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


def test_statement_names_are_told_by_text_and_types() -> None:
    """The same text and types give the same name in any process; a change gives another."""
    name = statement_name(b"SELECT %s", (25,))
    assert name == statement_name(b"SELECT %s", (25,))
    assert len(name) <= 63  # NAMEDATALEN - 1
    assert name != statement_name(b"SELECT %s", (20,))
    assert name != statement_name(b"SELECT  %s", (25,))
    assert statement_name(b"a", (1, 2)) != statement_name(b"a", (12,))
    # Pinned: a change of the scheme would make processes of two versions disagree.
    digest = hashlib.blake2b(b"SELECT 1\x00", digest_size=20).hexdigest()
    assert statement_name(b"SELECT 1", ()) == b"helix_" + digest.encode()


async def test_auto_prepares_on_the_store_pool_under_deterministic_names(
    open_store: Factory,
) -> None:
    """``auto`` (the default) prepares the store's statements under ``helix_`` names."""
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        assert store.prepare == "auto" and store.prepared_statements
        await _work(store)
        names = await _prepared(store)
        assert names and all(n.startswith("helix_") for n in names)
        assert store.prepared_statements
    async with open_store(pool_settings=ONE_CONNECTION) as again:
        await _work(again, "t")
        assert await _prepared(again) == names  # same statements, same names


async def test_off_prepares_nothing(pg_url: str, migrated: str) -> None:
    """``prepare=off`` (here from the URL) sends every statement unprepared."""
    store = open_store(f"{pg_url}?prepare=off&min_size=1&max_size=1", namespace=migrated)
    assert isinstance(store, PostgresStateStore)
    async with store:
        assert (store.prepare, store.prepared_statements) == ("off", False)
        await _work(store)
        assert await _prepared(store) == []


async def test_an_application_pool_is_prepared_only_with_on(pg_url: str, migrated: str) -> None:
    """``auto`` leaves an application's connections alone; ``on`` prepares on them, by name,
    keeping the application's own prepared statements."""
    async with AsyncConnectionPool(pg_url, min_size=1, max_size=1, open=False) as pool:
        async with PostgresStateStore(pool=pool, schema=migrated) as store:
            assert not store.prepared_statements
            await _work(store)
            assert await _prepared(store) == []
        async with pool.connection() as conn:
            await conn.execute("SELECT %s::int", (1,), prepare=True)
        async with PostgresStateStore(pool=pool, schema=migrated, prepare="on") as store:
            assert store.prepared_statements
            await _work(store, "t")
            names = await _prepared(store)
            assert "_pg3_0" in names
            assert len([n for n in names if n.startswith("helix_")]) >= 3
        async with pool.connection() as conn:  # the application's statement still runs prepared
            cur = await conn.execute("SELECT %s::int", (2,), prepare=True)
            assert await cur.fetchone() == (2,)


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
    """0A000 "cached plan must not change result type": the connection goes, the read is
    retried once on a new one, and the store goes on preparing."""
    async with open_store(pool_settings=ONE_CONNECTION) as store:
        await _work(store)
        async with store.pool.connection() as conn:
            before = conn.info.backend_pid
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin:
            await admin.execute(
                sql.SQL(
                    "ALTER TABLE {}.__agents_sessions ALTER COLUMN ui_count TYPE numeric"
                ).format(sql.Identifier(migrated))
            )
        assert await store.get_message_count("s") == 2
        async with store.pool.connection() as conn:
            assert conn.info.backend_pid != before
        assert store.prepared_statements


async def test_through_pgbouncer_every_call_lands_prepared_or_not(
    pgbouncer_url: str, store_on: Factory
) -> None:
    """Through a PgBouncer in transaction mode that does not keep prepared statements, two
    stores on one schema get right answers whether a call ran prepared or fell back."""
    async with store_on(pgbouncer_url) as a, store_on(pgbouncer_url) as b:
        for n in range(3):
            await _work(a, f"a{n}")
            await _work(b, f"b{n}")
        assert not (a.prepared_statements and b.prepared_statements)


async def test_without_psycopg_prepare_manager_auto_is_off_and_on_refuses(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, pg_url: str
) -> None:
    """The guard of psycopg's private API: ``auto`` prepares nothing (debug log), ``on`` is a
    StoreMisconfiguredError saying why."""
    monkeypatch.delattr(psycopg._preparing, "PrepareManager")
    with caplog.at_level(logging.DEBUG, logger="helix_agents.store_postgres"):
        store = PostgresStateStore(pg_url)
    assert not store.prepared_statements
    assert any("PrepareManager" in r.getMessage() for r in caplog.records)
    with pytest.raises(StoreMisconfiguredError, match=r"prepare='on'.*PrepareManager"):
        PostgresStateStore(pg_url, prepare="on")


@pytest.mark.parametrize("attribute", ["get", "_names"])
async def test_a_changed_prepare_manager_shape_is_unsupported(
    monkeypatch: pytest.MonkeyPatch, pg_url: str, attribute: str
) -> None:
    """A manager without a method or attribute the store relies on counts as missing."""
    base: Any = psycopg._preparing.PrepareManager
    if attribute == "get":
        monkeypatch.delattr(base, "get")
    else:
        init = base.__init__

        def without(self: Any) -> None:
            init(self)
            delattr(self, attribute)

        monkeypatch.setattr(base, "__init__", without)
    assert not PostgresStateStore(pg_url).prepared_statements
    with pytest.raises(StoreMisconfiguredError, match=attribute):
        PostgresStateStore(pg_url, prepare="on")


async def test_the_prepared_tail_read_answers_as_the_function(open_store: Factory) -> None:
    """Prepared, the last rows are one SELECT; unprepared, ``__agents_tail``: same answers."""
    async with open_store(prepare="off") as plain, open_store() as prepared:
        assert prepared.prepared_statements and not plain.prepared_statements
        await plain.create_session("empty")
        await _work(plain)
        for _ in range(3):
            await plain.append_messages(
                "s", MessageCommit(messages=(ChatMessage(role="user", content="more"),))
            )
        for sid in ("s", "empty"):
            for limit in (None, 1, 2, 5, 100):
                want = await plain.get_messages(sid, limit=limit)
                assert await prepared.get_messages(sid, limit=limit) == want
        assert len(await prepared.get_messages("s", limit=2)) == 2
        with pytest.raises(SessionNotFoundError):
            await prepared.get_messages("missing")
