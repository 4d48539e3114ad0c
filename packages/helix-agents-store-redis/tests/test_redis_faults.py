"""Faults on a real server: a connection killed mid-commit, a lost reply, lost scripts."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
import redis.asyncio as aredis

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    MessageCountConflictError,
    StoreUnavailableError,
)
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis._scripts import source

pytestmark = pytest.mark.anyio

# Keeps the server busy for ARGV[1] microseconds without writing anything.
BUSY = """
local t0 = redis.call('TIME')
while true do
  local t = redis.call('TIME')
  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > tonumber(ARGV[1]) then return 1 end
end
"""

# The one writer (lua/apply.lua).
APPLY_SHA = hashlib.sha1(source("apply").encode()).hexdigest()


@pytest.fixture
async def admin(private_redis_url: str) -> AsyncIterator[aredis.Redis]:
    """A separate connection to the fault server, for CLIENT and SCRIPT commands."""
    client = aredis.Redis.from_url(private_redis_url, decode_responses=True)
    yield client
    await client.client_unpause()
    await client.aclose()


def row(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


async def _eval(client: aredis.Redis, script: str, *args: Any) -> Any:
    return await client.eval(script, 0, *args)


async def _blocked_client(admin: aredis.Redis, name: str) -> dict[str, Any]:
    """The client called ``name`` once it is blocked (by CLIENT PAUSE) on a command."""
    for _ in range(200):
        for client in await admin.client_list():
            if client["name"] == name and "b" in client["flags"]:
                return client
        await asyncio.sleep(0.01)
    raise AssertionError(f"no blocked client named {name!r}")


async def test_client_kill_mid_commit_then_retry_lands_once(
    private_factory: Callable[..., RedisStateStore], admin: aredis.Redis
) -> None:
    async with private_factory(client_name="helix-victim") as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, MessageCommit(messages=(row("first"),)))
        turn = MessageCommit(messages=(row("second"),), expect_message_count=1, commit_id="c-2")
        # Writes (scripts included) now wait at the server; the kill lands while it waits.
        await admin.client_pause(10_000, all=False)
        commit = asyncio.create_task(store.append_messages(sid, turn))
        victim = await _blocked_client(admin, "helix-victim")
        assert victim["cmd"] == "evalsha"
        assert await admin.client_kill_filter(_id=victim["id"]) == 1
        await admin.client_unpause()
        with pytest.raises(StoreUnavailableError) as caught:
            await commit
        assert caught.value.may_have_landed and caught.value.session_id == sid
        assert await store.get_message_count(sid) == 1
        landed = await store.append_messages(sid, turn)
        assert (landed.first_index, landed.message_count, landed.replayed) == (1, 2, False)
        again = await store.append_messages(sid, turn)
        assert (again.message_count, again.replayed) == (2, True)
        assert await store.get_messages(sid) == [row("first"), row("second")]


async def test_a_connection_closed_while_idle_fails_one_call_typed_then_is_replaced(
    private_factory: Callable[..., RedisStateStore], admin: aredis.Redis
) -> None:
    """redis-py's pool does not see that the server closed an idle connection: the call
    that finds it raises the typed error (a write: may have landed, as redis-py cannot say
    whether the command got there), and the next call gets a new connection."""
    async with private_factory(client_name="helix-idle") as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, MessageCommit(messages=(row("first"),)))
        assert await store.get_message_count(sid) == 1
        # What the server's idle `timeout` does: every connection of the store is closed.
        killed = await admin.client_kill_filter(_type="normal", skipme=True)
        assert killed >= 1
        turn = MessageCommit(messages=(row("second"),), expect_message_count=1)
        with pytest.raises(StoreUnavailableError) as caught:
            await store.append_messages(sid, turn)
        assert caught.value.may_have_landed and "rediss://" not in str(caught.value)
        landed = await store.append_messages(sid, turn)
        assert (landed.first_index, landed.message_count) == (1, 2)
        assert await store.get_messages(sid) == [row("first"), row("second")]


async def test_reply_lost_after_commit_landed_then_retry_replays(
    private_factory: Callable[..., RedisStateStore], admin: aredis.Redis
) -> None:
    async with private_factory(operation_timeout=0.3) as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, MessageCommit(messages=(row("first"),)))
        # Planned from the head the store keeps: one EVALSHA, no read before it.
        turn = MessageCommit(messages=(row("second"),), expect_message_count=1)
        # The server runs a 1 s script; the commit queues behind it and the store gives
        # up waiting after 0.3 s. The commit then runs anyway: landed, reply lost.
        busy = asyncio.create_task(_eval(admin, BUSY, 1_000_000))
        await asyncio.sleep(0.1)
        with pytest.raises(StoreUnavailableError) as caught:
            await store.append_messages(sid, turn)
        assert caught.value.may_have_landed
        assert await busy == 1
        assert await store.get_message_count(sid) == 2
        with pytest.raises(MessageCountConflictError):  # sent again, it is not doubled
            await store.append_messages(sid, turn)
        assert await store.get_messages(sid) == [row("first"), row("second")]


async def _flush_and_commit(store: RedisStateStore, flush: Any) -> None:
    sid = (await store.create_session(user_id="u")).id
    await store.append_messages(sid, MessageCommit(messages=(row("before"),)))
    await flush()
    result = await store.append_messages(
        sid, MessageCommit(messages=(row("after"),), expect_message_count=1, commit_id="c")
    )
    assert (result.first_index, result.message_count, result.replayed) == (1, 2, False)
    # The reload put the script back (on every primary of a cluster).
    assert await store.client.script_exists(APPLY_SHA) == [True]
    assert await store.get_messages(sid) == [row("before"), row("after")]
    await flush()
    assert [s.id for s in (await store.list_sessions("u")).sessions] == [sid]
    await flush()
    assert await store.delete_session(sid)


async def test_script_flush_between_commits_reloads(
    private_factory: Callable[..., RedisStateStore], admin: aredis.Redis
) -> None:
    async with private_factory() as store:
        await _flush_and_commit(store, admin.script_flush)


async def test_script_flush_on_every_cluster_node_reloads(
    cluster_factory: Callable[..., RedisStateStore],
) -> None:
    async with cluster_factory() as store:
        client = store.client
        assert isinstance(client, aredis.RedisCluster)
        await _flush_and_commit(store, client.script_flush)


async def test_server_restart_loses_scripts_and_store_reloads_them(
    restartable_redis: tuple[str, Callable[[], None]],
) -> None:
    url, restart = restartable_redis
    async with RedisStateStore(url) as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, MessageCommit(messages=(row("before"),)))
        await anyio.to_thread.run_sync(restart)
        # The pooled connection died with the old server: a call may say so, typed.
        with contextlib.suppress(StoreUnavailableError):
            await store.get_session(sid)
        assert await store.client.script_exists(APPLY_SHA) == [False]
        assert await store.get_session(sid) is None  # nothing on disk: the data went too
        sid = (await store.create_session()).id
        result = await store.append_messages(sid, MessageCommit(messages=(row("after"),)))
        assert (result.first_index, result.message_count) == (0, 1)
        assert await store.client.script_exists(APPLY_SHA) == [True]
