"""A server that stops answering (SIGSTOP, its sockets still open): bounded waits, recovery."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aredis

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    MessageCountConflictError,
    StoreUnavailableError,
)
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine; the bound stays well under the 10 s default.
SLACK = 1.0


def row(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


async def times_out(call: Awaitable[Any]) -> StoreUnavailableError:
    """The StoreUnavailableError ``call`` raises, after no less and not much more than TIMEOUT."""
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        await call
    took = time.monotonic() - started
    assert TIMEOUT * 0.9 <= took < TIMEOUT + SLACK, took
    assert "did not answer in time" in str(caught.value)
    return caught.value


Freezable = tuple[str, Callable[[], None], Callable[[], None]]


async def test_frozen_server_commit_times_out_may_have_landed_and_store_recovers(
    frozen_redis: Freezable,
) -> None:
    url, freeze, thaw = frozen_redis
    async with RedisStateStore(url, operation_timeout=TIMEOUT) as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, MessageCommit(messages=(row("first"),)))
        # A plain append on a head the store has seen is one EVALSHA.
        turn = MessageCommit(messages=(row("second"),), expect_message_count=1)
        freeze()
        err = await times_out(store.append_messages(sid, turn))
        assert err.may_have_landed and err.session_id == sid  # its EVALSHA was sent
        # A commit id needs the session read first (core's replay check): that read is
        # what times out on the next connection's handshake, so nothing was sent.
        never = MessageCommit(messages=(row("never"),), commit_id="c-never")
        assert not (await times_out(store.append_messages(sid, never))).may_have_landed
        assert not (await times_out(store.get_session(sid))).may_have_landed
        thaw()
        # Every reply below answers its own command: no connection is reused half-read.
        # The frozen write ran once the server woke; sent again, its expected count refuses it.
        assert await store.get_messages(sid) == [row("first"), row("second")]
        with pytest.raises(MessageCountConflictError):
            await store.append_messages(sid, turn)
        assert (await store.get_session(sid)).message_count == 2  # type: ignore[union-attr]


async def test_cancelling_a_call_to_a_frozen_server_returns_promptly(
    frozen_redis: Freezable,
) -> None:
    url, freeze, thaw = frozen_redis
    async with RedisStateStore(url) as store:  # the default timeout: 10 s
        sid = (await store.create_session()).id
        freeze()
        call = asyncio.ensure_future(store.get_messages(sid))
        await asyncio.sleep(0.2)
        assert not call.done()
        started = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert time.monotonic() - started < 0.5
        thaw()
        assert await store.get_messages(sid) == []


async def test_opening_on_a_frozen_server_times_out_then_works_after_thaw(
    frozen_redis: Freezable,
) -> None:
    url, freeze, thaw = frozen_redis
    freeze()  # the kernel still accepts the connection; the handshake gets no answer
    store = RedisStateStore(url, operation_timeout=TIMEOUT, connect_timeout=TIMEOUT)
    err = await times_out(store.__aenter__())
    assert not err.may_have_landed
    thaw()
    async with RedisStateStore(url, operation_timeout=TIMEOUT) as again:
        assert await again.get_session("nothing") is None


async def test_frozen_cluster_node_times_out_and_the_store_recovers(
    cluster_freezer: tuple[str, Callable[[int], None], Callable[[int], None]],
) -> None:
    url, freeze, thaw = cluster_freezer
    async with RedisStateStore(
        url, namespace=f"fz{uuid.uuid4().hex[:8]}", operation_timeout=TIMEOUT
    ) as store:
        client = store.client
        assert isinstance(client, aredis.RedisCluster)
        sid = (await store.create_session()).id
        node = client.get_node_from_key(store.options.keys.meta(sid))
        assert node is not None
        port = int(node.port)
        assert await store.get_messages(sid) == []  # the store has seen its head
        freeze(port)
        turn = MessageCommit(messages=(row("x"),), expect_message_count=0)
        err = await times_out(store.append_messages(sid, turn))
        assert err.may_have_landed
        thaw(port)
        assert await store.get_messages(sid) == [row("x")]  # it ran once the node woke
        with pytest.raises(MessageCountConflictError):
            await store.append_messages(sid, turn)
        assert await store.delete_session(sid)


async def test_closing_a_store_on_a_frozen_server_returns_promptly(
    frozen_redis: Freezable,
) -> None:
    url, freeze, _ = frozen_redis
    store = RedisStateStore(url)
    await store.__aenter__()
    await store.create_session()
    freeze()
    started = time.monotonic()
    await store.close()
    assert time.monotonic() - started < 0.5
