"""Lost connections: a commit killed while it waits on the session lock; dead idle connections."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import psycopg
import pytest
from psycopg import sql

from helix_agents.core import ChatMessage, MessageCommit, StoreUnavailableError
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

pytestmark = pytest.mark.anyio

ONE_CONNECTION = PoolSettings(min_size=1, max_size=1, timeout=10.0)


def _user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


async def _contents(store: Any, sid: str) -> list[Any]:
    return [m.content for m in await store.get_messages(sid)]


async def _backend_waiting_on_lock(admin: psycopg.AsyncConnection[Any], schema: str) -> int:
    """The pid of the backend running this schema's applier, once it waits on a lock."""
    with anyio.fail_after(10):
        while True:
            cur = await admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                [f'%"{schema}".__agents_apply%'],
            )
            row = await cur.fetchone()
            if row is not None:
                return int(row[0])
            await anyio.sleep(0.05)


async def test_commit_killed_while_waiting_on_lock(
    open_store: Any, pg_url: str, migrated: str
) -> None:
    """Killed mid-commit: unavailable, nothing written, the store recovers, a retry lands once."""
    lock = sql.SQL("SELECT 1 FROM {}.__agents_sessions WHERE session_id = 's' FOR UPDATE").format(
        sql.Identifier(migrated)
    )
    retried = MessageCommit(
        messages=(_user("b1"), _user("b2")), commit_id="c1", expect_message_count=1
    )
    async with (
        open_store(pool_settings=ONE_CONNECTION) as store,
        await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin,
        await psycopg.AsyncConnection.connect(pg_url) as locker,
    ):
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=(_user("a"),)))
        await locker.execute(lock)  # holds the session row lock until rollback

        outcome: list[BaseException] = []

        async def commit() -> None:
            try:
                await store.append_messages("s", retried)
            except StoreUnavailableError as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(commit)
            pid = await _backend_waiting_on_lock(admin, migrated)
            await admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        await locker.rollback()

        assert len(outcome) == 1
        error = outcome[0]
        assert isinstance(error, StoreUnavailableError)
        assert error.may_have_landed is True
        assert error.retryable is True
        assert not isinstance(error.__cause__, StoreUnavailableError)
        assert isinstance(error.__cause__, psycopg.OperationalError)

        # Nothing of the commit was written.
        assert await store.get_message_count("s") == 1
        assert await _contents(store, "s") == ["a"]

        # The next commit through the same store (its only connection was killed) lands...
        first = await store.append_messages("s", retried)
        assert (first.first_index, first.message_count, first.replayed) == (1, 3, False)
        # ...and retrying it again replays: the commit landed exactly once.
        again = await store.append_messages("s", retried)
        assert (again.first_index, again.message_count, again.replayed) == (1, 3, True)
        assert await _contents(store, "s") == ["a", "b1", "b2"]


async def _kill_backends_of(admin: psycopg.AsyncConnection[Any], application_name: str) -> int:
    cur = await admin.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
        [application_name],
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


@asynccontextmanager
async def _killed_idle_connection(
    pg_url: str, schema: str, tag: str, settings: PoolSettings
) -> AsyncIterator[PostgresStateStore]:
    """A store on ``schema`` with session ``s`` (its head read, so a plain append is one
    apply), whose idle connection the server just killed."""
    name = f"helix-{tag}-{schema}"
    url = f"{pg_url}{'&' if '?' in pg_url else '?'}application_name={name}"
    async with (
        PostgresStateStore(url, schema=schema, pool_settings=settings) as store,
        await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin,
    ):
        await store.create_session("s")
        assert await store.get_message_count("s") == 0
        assert await _kill_backends_of(admin, name) == 1
        yield store


async def test_reads_recover_from_a_killed_idle_connection(pg_url: str, migrated: str) -> None:
    """A read on a connection the server killed while idle is retried on a fresh one."""
    async with _killed_idle_connection(pg_url, migrated, "read", ONE_CONNECTION) as store:
        assert await store.get_message_count("s") == 0
        assert (await store.get_session("s")) is not None


async def test_health_check_recovers_writes_from_a_killed_idle_connection(
    pg_url: str, migrated: str
) -> None:
    """With ``check=True`` the pool replaces a dead idle connection before a write uses it."""
    settings = PoolSettings(min_size=1, max_size=1, timeout=10.0, check=True)
    async with _killed_idle_connection(pg_url, migrated, "check", settings) as store:
        result = await store.append_messages("s", MessageCommit(messages=(_user("x"),)))
        assert result.message_count == 1


async def test_write_on_a_dead_connection_says_it_may_have_landed(
    pg_url: str, migrated: str
) -> None:
    """Without the health check, a write sent on a dead connection is unavailable, maybe landed."""
    async with _killed_idle_connection(pg_url, migrated, "dead", ONE_CONNECTION) as store:
        with pytest.raises(StoreUnavailableError) as caught:
            await store.append_messages("s", MessageCommit(messages=(_user("x"),)))
        assert caught.value.may_have_landed is True
        # The pool replaced the connection: the next write lands.
        result = await store.append_messages("s", MessageCommit(messages=(_user("y"),)))
        assert result.message_count == 1
