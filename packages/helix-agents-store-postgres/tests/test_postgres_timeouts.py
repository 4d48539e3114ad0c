"""Bounded waits: a server that stops answering (frozen with SIGSTOP, TCP still up).

Every call ends within ``operation_timeout`` with ``StoreUnavailableError``,
cancelling a call ends it at once, and the same store works again once the
server runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from helix_agents.contract.servers import Server
from helix_agents.core import ChatMessage, MessageCommit, StoreUnavailableError
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

from .no_secrets import assert_not_shown

pytestmark = pytest.mark.anyio

TIMEOUT = 1.0
# Slack for a loaded machine (the tests share two cores with other runs).
MARGIN = 1.0
TWO = PoolSettings(min_size=2, max_size=2, timeout=10.0, connect_timeout=TIMEOUT)


def _user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


@pytest.fixture(params=["own pool", "application pool"])
async def store(
    private_pg: Server, request: pytest.FixtureRequest
) -> AsyncIterator[PostgresStateStore]:
    """A store on the private server, in a schema of its own, that times out after 1 s.

    The store's own pool runs a statement in the caller's task; an application's
    pool, whose connections are not the store's class, in a shielded task of its own.
    """
    schema = f"helix_frozen_{uuid.uuid4().hex[:12]}"
    options: dict[str, Any] = {"schema": schema, "auto_migrate": True}
    if request.param == "own pool":
        async with PostgresStateStore(
            private_pg.url, pool_settings=TWO, operation_timeout=TIMEOUT, **options
        ) as opened:
            await opened.create_session("s")
            yield opened
        return
    kwargs = {"autocommit": True, "connect_timeout": 2}
    async with (
        AsyncConnectionPool(
            private_pg.url, min_size=2, max_size=2, kwargs=kwargs, open=False
        ) as pool,
        PostgresStateStore(pool=pool, operation_timeout=TIMEOUT, **options) as opened,
    ):
        await opened.create_session("s")
        yield opened


async def _timed(call: Any) -> tuple[BaseException, float]:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        await call
    return caught.value, time.monotonic() - started


async def test_a_frozen_server_times_out_reads_and_writes_then_the_store_recovers(
    store: PostgresStateStore, private_pg: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """get_session and append_messages end within the timeout; a sent write may have landed."""
    caplog.set_level(logging.DEBUG)
    assert await store.get_message_count("s") == 0  # the head the plain append is planned from
    plain = MessageCommit(messages=(_user("a"),))
    with private_pg.frozen():
        write, took = await _timed(store.append_messages("s", plain))
        assert took < TIMEOUT + MARGIN
        assert isinstance(write, StoreUnavailableError)
        assert write.may_have_landed is True and write.retryable is True
        assert "operation_timeout=1" in str(write)

        read, took = await _timed(store.get_session("s"))
        assert took < TIMEOUT + MARGIN
        assert isinstance(read, StoreUnavailableError)
        assert read.may_have_landed is False
    assert private_pg.password is not None
    for error in (write, read):
        assert_not_shown(private_pg.password, error=error, records=caplog.records)

    # The same store works again (the timed-out append may have landed); a commit id makes
    # a retry land exactly once.
    landed = await store.get_message_count("s")
    assert landed in (0, 1)
    commit = MessageCommit(messages=(_user("b"),), commit_id="c1")
    for _ in range(2):
        assert (await store.append_messages("s", commit)).message_count == landed + 1
    assert await store.get_message_count("s") == landed + 1


async def test_cancelling_a_call_on_a_frozen_server_is_prompt(
    private_pg: Server, store: PostgresStateStore
) -> None:
    """A cancelled call ends at once (psycopg alone would wait ~10 s to cancel in-band)."""
    with private_pg.frozen():
        calls = (
            lambda: store.get_session("s"),
            lambda: store.append_messages("s", MessageCommit(messages=(_user("x"),))),
        )
        for call in calls:
            task = asyncio.ensure_future(call())
            await asyncio.sleep(0.2)
            assert not task.done()
            started = time.monotonic()
            task.cancel()
            await asyncio.wait((task,))
            assert time.monotonic() - started < 0.5
            assert task.cancelled()
    assert (await store.get_session("s")) is not None


async def test_waiting_for_a_connection_counts_against_the_timeout(
    private_pg: Server, store: PostgresStateStore
) -> None:
    """With every connection stuck, the next call waits for one no longer than the timeout."""
    with private_pg.frozen():
        stuck = [asyncio.ensure_future(store.get_session("s")) for _ in range(2)]
        await asyncio.sleep(0.1)
        error, took = await _timed(store.get_message_count("s"))
        assert took < TIMEOUT + MARGIN
        assert isinstance(error, StoreUnavailableError) and error.may_have_landed is False
        done = await asyncio.gather(*stuck, return_exceptions=True)
        assert all(isinstance(e, StoreUnavailableError) for e in done)
    assert await store.get_message_count("s") == 0


async def test_opening_a_store_on_a_frozen_server_times_out(private_pg: Server) -> None:
    """The first connection is bounded by connect_timeout: unavailable, retryable."""
    store = PostgresStateStore(private_pg.url, pool_settings=TWO, operation_timeout=TIMEOUT)
    with private_pg.frozen():
        error, took = await _timed(store.__aenter__())
    assert took < TIMEOUT + MARGIN
    assert isinstance(error, StoreUnavailableError) and error.retryable
    assert "connect_timeout=1" in str(error)
