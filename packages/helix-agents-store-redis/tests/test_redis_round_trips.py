"""Round trips, counted by the client (a counting connection: one socket write per trip)
and by the server (MONITOR, INFO commandstats).

Core plans a write from a snapshot; a write that needs only the head (a plain append,
a replace, a finish, a clear, ...) is planned from the last head the store saw, so it is
one EVALSHA of lua/apply.lua. A write that needs more (a commit id's replay, a delivery's
queue entries, a pop's rows) reads first: two.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import Any

import pytest
import redis.asyncio as aredis
from redis.crc import key_slot

from helix_agents.core import (
    ChatMessage,
    CommitResult,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StartRun,
    StoredContextItem,
)
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class CountingConnection(aredis.Connection):
    """A real connection that records every write it makes to the socket."""

    writes: list[bytes]

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        chunks = [command] if isinstance(command, (bytes, str)) else list(command)
        type(self).writes.append(
            b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
        )
        await super().send_packed_command(command, check_health)


async def evalsha_calls(urls: list[str]) -> int:
    """EVALSHA calls so far on the servers at ``urls`` (a script cannot call EVALSHA itself)."""
    total = 0
    for url in urls:
        async with aredis.Redis.from_url(url) as node:
            stats: dict[str, Any] = await node.info("commandstats")
        total += int(stats.get("cmdstat_evalsha", {}).get("calls", 0))
    return total


async def monitored(monitor: Any, sentinel: str) -> list[str]:
    """The commands clients sent (not those scripts ran) until ``ECHO sentinel``."""
    sent: list[str] = []
    async for line in monitor.listen():
        if line["client_type"] == "lua":
            continue
        if line["command"] == f"ECHO {sentinel}":
            return sent
        sent.append(line["command"].split(" ")[0])
    raise AssertionError("MONITOR ended early")


def turn(text: str, **fields: Any) -> MessageCommit:
    return MessageCommit(messages=(ChatMessage(role="user", content=text),), **fields)


async def counted(
    store: RedisStateStore, url: str, call: Callable[[], Awaitable[Any]]
) -> tuple[Any, int, list[str]]:
    """What ``call`` returns, its socket writes and the commands the server got."""
    async with (
        aredis.Redis.from_url(url, decode_responses=True) as admin,
        aredis.Redis.from_url(url, decode_responses=True) as watcher,
    ):
        await admin.ping()  # its connection is open before MONITOR starts listening
        async with watcher.monitor() as monitor:
            CountingConnection.writes.clear()
            result = await call()
            writes = len(CountingConnection.writes)
            await admin.echo("helix-sentinel")
            sent = await monitored(monitor, "helix-sentinel")
    return result, writes, sent


async def test_a_plain_append_after_a_read_is_one_evalsha(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    CountingConnection.writes = []
    async with private_factory(connection_class=CountingConnection) as store:
        sid = (await store.create_session(user_id="u")).id
        assert await store.get_messages(sid, limit=20) == []
        for n in range(3):  # each lands on the head the one before returned
            commit = turn(str(n), expect_message_count=n)

            async def append(commit: MessageCommit = commit) -> CommitResult:
                return await store.append_messages(sid, commit)

            result, writes, sent = await counted(store, private_redis_url, append)
            assert result.message_count == n + 1
            assert (writes, sent) == (1, ["EVALSHA"])
        # The hot read: the last rows, one EVALSHA of lua/read.lua.
        rows, writes, sent = await counted(
            store, private_redis_url, lambda: store.get_messages(sid, limit=20)
        )
        assert len(rows) == 3 and (writes, sent) == (1, ["EVALSHA"])
        count, writes, sent = await counted(
            store, private_redis_url, lambda: store.get_message_count(sid)
        )
        assert count == 3 and (writes, sent) == (1, ["EVALSHA"])


async def test_a_write_that_needs_more_than_the_head_reads_first(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    CountingConnection.writes = []
    async with private_factory(connection_class=CountingConnection) as store:
        sid = (await store.create_session()).id
        item = StoredContextItem(key="k", item=ContextItem(kind="instruction", content="c"), at=T0)
        await store.record_context_item(sid, item)
        await store.append_messages(sid, turn("a"))
        commit = MessageCommit(
            messages=(
                ChatMessage(role="user", content="b"),
                ContextMessage(kind="instruction", content="c"),
            ),
            start_run=StartRun(run_id="r1", rewind_to=1),
            deliver_context_items=(ContextItemDelivery(key="k", row_offset=1),),
            commit_id="turn-1",
        )
        result, writes, sent = await counted(
            store, private_redis_url, lambda: store.append_messages(sid, commit)
        )
        assert (result.first_index, result.message_count) == (1, 3)
        assert (writes, sent) == (2, ["EVALSHA", "EVALSHA"])
        # A store that never saw the session reads it before a plain append too.
        async with private_factory(connection_class=CountingConnection) as fresh:
            _, writes, sent = await counted(
                fresh, private_redis_url, lambda: fresh.append_messages(sid, turn("c"))
            )
        assert (writes, sent) == (2, ["EVALSHA", "EVALSHA"])


async def test_pop_reads_its_rows_and_replace_is_one_evalsha(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    CountingConnection.writes = []
    rows = [ChatMessage(role="user", content=str(i)) for i in range(4)]
    async with private_factory(connection_class=CountingConnection) as store:
        sid = (await store.create_session(user_id="u")).id
        await store.append_messages(sid, MessageCommit(messages=tuple(rows)))
        popped, writes, sent = await counted(
            store, private_redis_url, lambda: store.pop_messages(sid, 2)
        )
        assert popped == rows[2:] and (writes, sent) == (2, ["EVALSHA", "EVALSHA"])
        result, writes, sent = await counted(
            store,
            private_redis_url,
            lambda: store.replace_messages(sid, 1, rows[3:], expect_message_count=2),
        )
        assert (result.first_index, result.message_count) == (1, 2)
        assert (writes, sent) == (1, ["EVALSHA"])


async def test_a_listing_page_is_two_round_trips_on_a_standalone_server(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    # The index page, then one pipeline reading each listed session's head and approvals.
    asked = PendingApproval(
        approval_id="a1", tool_name="t", tool_call_id="c1", input={}, requested_at=T0
    )
    CountingConnection.writes = []
    async with private_factory(connection_class=CountingConnection) as store:
        for i in range(25):
            sid = (await store.create_session(user_id="lister")).id
            if i % 2:
                await store.add_pending_approvals(sid, [asked])
        page, writes, sent = await counted(
            store, private_redis_url, lambda: store.list_sessions("lister", first=20)
        )
    assert len(page.sessions) == 20 and page.next_cursor is not None
    assert [s.pending_approvals for s in page.sessions] == [0, 1] * 10  # newest first
    assert writes == 2
    assert sent == ["ZRANGEBYSCORE"] + ["HMGET", "HLEN"] * 21


async def test_on_a_cluster_a_write_of_a_users_session_takes_one_more_evalsha(
    cluster_factory: Callable[..., RedisStateStore], redis_cluster_url: str
) -> None:
    # The user's listing index lives in another slot: it moves after the write landed.
    nodes = [f"redis://{n}" for n in redis_cluster_url.removeprefix("redis+cluster://").split(",")]
    async with cluster_factory() as store:
        for user_id, calls in ((None, 1), ("u", 2)):
            sid = (await store.create_session(user_id=user_id)).id
            await store.get_messages(sid)
            before = await evalsha_calls(nodes)
            await store.append_messages(sid, turn("a", expect_message_count=0))
            assert await evalsha_calls(nodes) - before == calls
            before = await evalsha_calls(nodes)
            await store.get_messages(sid, limit=20)
            assert await evalsha_calls(nodes) - before == 1


_ARG = re.compile(r'"(.*?)(?<!\\)"')


async def commands_until(monitor: Any, sentinel: str) -> list[list[str]]:
    """Every client command (not those scripts ran) on a MONITOR, as its arguments,
    until ``ECHO sentinel``."""
    sent: list[list[str]] = []
    while True:
        line = await monitor.connection.read_response()
        _, _, rest = (line.decode() if isinstance(line, bytes) else line).partition(" ")
        head, _, command = rest.partition("] ")
        if head.endswith(" lua"):
            continue
        args = [a.replace('\\"', '"') for a in _ARG.findall(command)]
        if args == ["ECHO", sentinel]:
            return sent
        sent.append(args)


async def keys_of(node: aredis.Redis, args: list[str]) -> list[bytes | str]:
    """The keys of a command, as the server finds them (``COMMAND GETKEYS``)."""
    if len(args) < 2:  # PING, COMMAND, ...: no keys
        return []
    try:
        keys = await node.command_getkeys(*args)
    except aredis.ResponseError as exc:  # CLUSTER SLOTS, SCRIPT LOAD, ...: no keys
        if "no key arguments" not in str(exc):
            raise
        return []
    return keys


async def test_on_a_cluster_no_command_on_any_node_spans_two_slots(
    cluster_factory: Callable[..., RedisStateStore], redis_cluster_url: str
) -> None:
    urls = [f"redis://{n}" for n in redis_cluster_url.removeprefix("redis+cluster://").split(",")]
    async with AsyncExitStack() as stack:
        nodes = [
            await stack.enter_async_context(aredis.Redis.from_url(u, decode_responses=True))
            for u in urls
        ]
        watchers = [
            await stack.enter_async_context(aredis.Redis.from_url(u, decode_responses=True))
            for u in urls
        ]
        for node in nodes:
            await node.ping()
        monitors = [await stack.enter_async_context(w.monitor()) for w in watchers]
        async with cluster_factory() as store:
            # Every kind of call: writes with a user (the listing's second step), reads,
            # the listing, pops, a clone, deletes.
            sids = []
            for n in range(6):
                sid = (await store.create_session(user_id="monitor-user")).id
                await store.record_late_answer(
                    sid, LateAnswer(call_id="c", tool_name="t", output={"n": n}, at=T0)
                )
                await store.append_messages(sid, turn("a", commit_id="c1"))
                sids.append(sid)
            for sid in sids:
                await store.get_messages(sid, limit=2)
                await store.get_session(sid)
                await store.get_message_count(sid)
            page = await store.list_sessions("monitor-user", first=4)
            assert page.next_cursor is not None
            await store.list_sessions("monitor-user", first=4, cursor=page.next_cursor)
            await store.pop_messages(sids[0], 1)
            copy = await store.clone_session(sids[1])
            for sid in (*sids, copy.id):
                assert await store.delete_session(sid)
        for node in nodes:
            await node.echo("helix-slots")
        seen = 0
        for node, monitor in zip(nodes, monitors, strict=True):
            for args in await commands_until(monitor, "helix-slots"):
                keys = await keys_of(node, args)
                slots = {key_slot(k.encode() if isinstance(k, str) else k) for k in keys}
                assert len(slots) <= 1, args[:8]
                seen += len(keys) > 0
        assert seen >= 30  # the workload's commands were all seen
