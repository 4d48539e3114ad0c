"""URLs and options, application-owned pools, closing, unreachable servers, exact JSON."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StoreUnavailableError,
    ValidationError,
    open_store,
)
from helix_agents.store_postgres import PoolSettings, PostgresStateStore
from helix_agents.store_postgres._config import split_url

pytestmark = pytest.mark.anyio


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _with_query(url: str, query: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{query}"


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
async def test_open_store_by_url_with_pool_options(pg_url: str, schema: str, scheme: str) -> None:
    """Both schemes; store options come out of the query, libpq's stay; namespace is the schema."""
    url = _with_query(pg_url, "max_size=3&min_size=2&auto_migrate=true&application_name=helix-t")
    url = scheme + url[url.index("://") :]
    store = open_store(url, namespace=schema, max_messages=5)
    assert isinstance(store, PostgresStateStore)
    assert (store.schema, store.max_messages) == (schema, 5)
    assert (store.pool.min_size, store.pool.max_size) == (2, 3)
    async with store:
        async with store.pool.connection() as conn:
            cur = await conn.execute("SELECT current_setting('application_name')")
            assert await cur.fetchone() == ("helix-t",)
        await store.create_session("s")
        assert (await store.get_session("s")) is not None


async def test_url_with_percent_encoded_libpq_options_opens(pg_url: str, migrated: str) -> None:
    """A space in a libpq parameter stays percent-encoded (libpq reads no "+" as a space)."""
    url = _with_query(pg_url, "options=-c%20statement_timeout%3D5s&max_size=2")
    assert "options=-c%20statement_timeout%3D5s" in split_url(url)[0]
    async with open_store(url, namespace=migrated) as store:
        assert isinstance(store, PostgresStateStore)
        async with store.pool.connection() as conn:
            cur = await conn.execute("SHOW statement_timeout")
            assert await cur.fetchone() == ("5s",)
        await store.create_session("s")
        assert await store.get_message_count("s") == 0


def test_bad_url_options_and_arguments_are_validation_errors() -> None:
    """A malformed option value, both or neither of conninfo and pool, a bad schema."""
    assert split_url("postgresql://h/db?sslmode=disable&max_size=4")[1] == {"max_size": 4}
    assert "sslmode=disable" in split_url("postgresql://h/db?sslmode=disable&max_size=4")[0]
    with pytest.raises(ValidationError):
        split_url("postgresql://h/db?max_size=many")
    with pytest.raises(ValidationError):
        PostgresStateStore()
    with pytest.raises(ValidationError):
        PostgresStateStore("postgresql://h/db", schema="")
    with pytest.raises(ValidationError):
        PostgresStateStore("postgresql://h/db", schema="x" * 64)
    with pytest.raises(ValidationError):
        PostgresStateStore("postgresql://h/db", max_messages=0)


async def test_application_pool_with_transactional_connections(pg_url: str, migrated: str) -> None:
    """A pool the application owns (connections not in autocommit) works and stays open."""
    async with AsyncConnectionPool(pg_url, min_size=1, max_size=2, open=False) as pool:
        async with PostgresStateStore(pool=pool, schema=migrated) as store:
            await store.create_session("s")
            done = await store.append_messages(
                "s", MessageCommit(messages=(ChatMessage(role="user", content="a"),))
            )
            assert done.message_count == 1
            assert await store.get_message_count("s") == 1
        async with pool.connection() as conn:
            assert conn.autocommit is False  # switched back after each statement
            cur = await conn.execute("SELECT 1")
            assert await cur.fetchone() == (1,)
        with pytest.raises(StoreUnavailableError):
            await store.get_session("s")


async def test_the_store_pool_left_transactional_by_the_application_still_commits(
    open_store: Any,
) -> None:
    """A connection of the store's own pool that the application switched out of autocommit:
    each statement still runs in autocommit, so no write waits in a transaction the pool would
    roll back."""
    async with open_store(pool_settings=PoolSettings(min_size=1, max_size=1)) as store:
        async with store.pool.connection() as conn:
            await conn.set_autocommit(False)
        await store.create_session("s")
        done = await store.append_messages(
            "s", MessageCommit(messages=(ChatMessage(role="user", content="a"),))
        )
        assert done.message_count == 1
        async with store.pool.connection() as conn:
            assert conn.autocommit is False
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert await store.get_message_count("s") == 1


async def test_deleting_a_session_deletes_its_rows_even_racing_a_commit(
    open_store: Any, migrated: str
) -> None:
    """Rows go with their session (the delete takes them, under the session row lock)."""
    row = ChatMessage(role="user", content="a")
    async with open_store(pool_settings=PoolSettings(min_size=2, max_size=4)) as store:
        for n in range(20):
            await store.create_session(f"s{n}")
            await store.append_messages(f"s{n}", MessageCommit(messages=(row,)))
            raced = await asyncio.gather(
                store.append_messages(f"s{n}", MessageCommit(messages=(row, row))),
                store.delete_session(f"s{n}"),
                return_exceptions=True,
            )
            assert raced[1] is True
        assert await store.delete_session("s0") is False
        async with store.pool.connection() as conn:
            cur = await conn.execute(
                sql.SQL("SELECT count(*) FROM {}.__agents_messages").format(
                    sql.Identifier(migrated)
                )
            )
            assert await cur.fetchone() == (0,)
        await store.create_session("s0")
        assert await store.get_messages("s0") == []


async def test_every_method_of_a_closed_store_is_unavailable(open_store: Any) -> None:
    """After close() nothing reaches the driver: each call raises StoreUnavailableError."""
    store = open_store()
    async with store:
        await store.create_session("s")
    calls = [
        store.get_session("s"),
        store.create_session("t"),
        store.list_sessions("u", first=0),
        store.append_messages("s", MessageCommit()),
        store.get_messages("s", limit=-1),
        store.page_messages("s", limit=0),
        store.truncate_messages("s", 0),
        store.clone_session("s"),
        store.resolve_approval("s", "a"),
        store.migrate(),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailableError) as caught:
            await call
        assert caught.value.may_have_landed is False


async def test_unreachable_server_is_unavailable_on_open() -> None:
    """Nothing listens: opening fails with StoreUnavailableError, not a driver error."""
    url = f"postgresql://127.0.0.1:{_free_port()}/postgres?connect_timeout=1"
    store = PostgresStateStore(url, pool_settings=PoolSettings(timeout=1.0))
    with pytest.raises(StoreUnavailableError) as caught:
        async with store:
            pass
    assert caught.value.may_have_landed is False
    assert isinstance(caught.value.__cause__, psycopg.Error)


async def test_json_that_jsonb_would_alter_round_trips_exactly(open_store: Any) -> None:
    """NUL characters, the escape character, and floats jsonb prints as integers."""
    row = ChatMessage(
        role="user",
        content="a\x00b\ue000\ue001",
        extra={"big": 1e100, "tiny": 5e-324, "int": 10**30, "k\x00": [1.0]},
    )
    async with open_store() as store:
        await store.create_session("s", metadata={"m\x00": "\ue000\ue002", "f": 1e22})
        await store.append_messages("s", MessageCommit(messages=(row,)))
        (back,) = await store.get_messages("s")
        assert back == row
        assert back.model_dump() == row.model_dump()
        assert back.model_extra is not None
        assert type(back.model_extra["extra"]["big"]) is float
        info = await store.get_session("s")
        assert info is not None
        assert info.metadata == {"m\x00": "\ue000\ue002", "f": 1e22}


async def test_ids_postgres_cannot_store_are_validation_errors(open_store: Any) -> None:
    """Text columns cannot hold NUL: such an id is refused as invalid, not as unavailable."""
    async with open_store() as store:
        with pytest.raises(ValidationError):
            await store.create_session("a\x00b")


async def test_pgbouncer_runs_in_transaction_pooling_mode(pgbouncer_url: str) -> None:
    """The contract's PgBouncer really pools by transaction: session state does not stick."""
    async with (
        await psycopg.AsyncConnection.connect(pgbouncer_url, autocommit=True) as a,
        await psycopg.AsyncConnection.connect(pgbouncer_url, autocommit=True) as b,
    ):
        # Two clients each inside a transaction must hold two server connections...
        await a.execute("BEGIN")
        await b.execute("BEGIN")
        pa = await (await a.execute("SELECT pg_backend_pid()")).fetchone()
        pb = await (await b.execute("SELECT pg_backend_pid()")).fetchone()
        await a.execute("COMMIT")
        await b.execute("COMMIT")
        assert pa != pb
        # ...and once both are idle, one server connection can serve both, one after the other.
        qa = await (await a.execute("SELECT pg_backend_pid()")).fetchone()
        qb = await (await b.execute("SELECT pg_backend_pid()")).fetchone()
        assert qa == qb
