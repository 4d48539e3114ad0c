"""One commit is one round trip: one EVALSHA, counted by the client and by the server."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import Any

import pytest
import redis.asyncio as aredis
from redis.crc import key_slot

from helix_agents.core import (
    ChatMessage,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    MessageCommit,
    PendingApproval,
    SessionsPage,
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


async def prepared(store: RedisStateStore, user_id: str | None) -> tuple[str, MessageCommit]:
    """A session and a commit that uses every check: run start, rewind, deliveries, commit id."""
    sid = (await store.create_session(user_id=user_id)).id
    item = StoredContextItem(key="k", item=ContextItem(kind="instruction", content="c"), at=T0)
    await store.record_context_item(sid, item)
    await store.append_messages(
        sid, MessageCommit(messages=(ChatMessage(role="user", content="a"),))
    )
    commit = MessageCommit(
        messages=(
            ChatMessage(role="user", content="b"),
            ContextMessage(kind="instruction", content="c"),
        ),
        start_run=StartRun(run_id="r1", rewind_to=1),
        deliver_context_items=(ContextItemDelivery(key="k", row_offset=1),),
        commit_id="turn-1",
    )
    return sid, commit


async def test_a_commit_is_one_write_on_the_socket_and_one_command_on_the_server(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    CountingConnection.writes = []
    async with (
        private_factory(connection_class=CountingConnection) as store,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as admin,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as watcher,
    ):
        sid, commit = await prepared(store, "u")
        CountingConnection.writes.clear()
        await admin.ping()  # its connection is open before MONITOR starts listening
        async with watcher.monitor() as monitor:
            result = await store.append_messages(sid, commit)
            await admin.echo("helix-sentinel")
            sent = await monitored(monitor, "helix-sentinel")
        assert (result.first_index, result.message_count) == (1, 3)
        assert len(CountingConnection.writes) == 1
        assert CountingConnection.writes[0].split(b"\r\n")[2] == b"EVALSHA"
        assert sent == ["EVALSHA"]


async def test_a_listing_page_is_one_script_call_on_a_standalone_server(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    # One call reads the index and the summaries kept beside it. Sessions without a
    # summary (written before summaries existed, or whose summary is gone) are read
    # from their own keys: the same page, one more call.
    asked = PendingApproval(
        approval_id="a1", tool_name="t", tool_call_id="c1", input={}, requested_at=T0
    )
    async with (
        private_factory() as store,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as admin,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as watcher,
    ):
        for i in range(25):
            sid = (await store.create_session(user_id="lister")).id
            if i % 2:
                await store.add_pending_approvals(sid, [asked])
        summaries = store.options.keys.user("lister") + ":sum"
        pages: list[SessionsPage] = []
        sent: list[list[str]] = []
        for drop in (False, True):
            if drop:
                assert await admin.hlen(summaries) == 25
                await admin.hdel(summaries, pages[0].sessions[0].id, pages[0].sessions[5].id)
            await admin.ping()
            async with watcher.monitor() as monitor:
                pages.append(await store.list_sessions("lister", first=20))
                await admin.echo("helix-sentinel")
                sent.append(await monitored(monitor, "helix-sentinel"))
        assert len(pages[0].sessions) == 20 and pages[0].next_cursor is not None
        assert [s.pending_approvals for s in pages[0].sessions] == [0, 1] * 10  # newest first
        assert pages[1] == pages[0]
        assert sent == [["EVALSHA"], ["EVALSHA", "EVALSHA"]]


async def test_a_summary_past_its_deadline_or_behind_its_index_entry_is_not_shown(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    # Such a session is read from its own keys (what they say is shown), on the first
    # page and on a page after a cursor.
    async with (
        private_factory() as store,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as admin,
    ):
        sids = [(await store.create_session(user_id="sums")).id for _ in range(4)]
        keys = store.options.keys
        summaries = keys.user("sums") + ":sum"
        newest, older, expired, oldest = reversed(sids)
        # A writer that kept no summary (an older version) moved `older` to the front...
        la = int(str(await admin.hget(keys.meta(newest), "la"))) + 5
        await admin.hset(keys.meta(older), mapping={"la": la, "count": 7})
        await admin.zadd(keys.user("sums"), {older: -la})
        # ...and `expired`'s summary says it idled out (its keys still live here).
        _, *rest = str(await admin.hget(summaries, expired)).split(",")
        rest[2] = "9"  # its count, as no read of the session says
        await admin.hset(summaries, expired, ",".join(["1", *rest]))
        whole = await store.list_sessions("sums", first=4)
        walked = [(await store.list_sessions("sums", first=1)).sessions[0]]
        while len(walked) < 4:
            cursor = (await store.list_sessions("sums", first=len(walked))).next_cursor
            walked += (await store.list_sessions("sums", first=1, cursor=cursor)).sessions
    assert [s.id for s in whole.sessions] == [older, newest, expired, oldest]
    assert walked == list(whole.sessions)
    assert [s.message_count for s in whole.sessions] == [7, 0, 0, 0]
    assert whole.sessions[0].last_activity_at > whole.sessions[1].last_activity_at


async def test_a_users_summaries_become_a_hashtable_past_sixteen_sessions(
    private_factory: Callable[..., RedisStateStore],
) -> None:
    # A page reads ~20 of them, the newest last in a listpack: each a scan from its start.
    encodings = []
    async with private_factory() as store:
        summaries = store.options.keys.user("many") + ":sum"
        for _ in range(17):
            await store.create_session(user_id="many")
            encodings.append(await store.client.object("encoding", summaries))
        held = await store.client.hlen(summaries)
        converter_left = await store.client.hexists(summaries, "")
        page = await store.list_sessions("many", first=20)
    assert encodings == ["listpack"] * 16 + ["hashtable"]
    assert held == 17 and not converter_left  # the converting field is gone
    assert len(page.sessions) == 17 and page.next_cursor is None


async def test_on_a_cluster_the_listing_takes_one_more_command(
    cluster_factory: Callable[..., RedisStateStore], redis_cluster_url: str
) -> None:
    nodes = [f"redis://{n}" for n in redis_cluster_url.removeprefix("redis+cluster://").split(",")]
    async with cluster_factory() as store:
        for user_id, calls in ((None, 1), ("u", 2)):
            sid, commit = await prepared(store, user_id)
            before = await evalsha_calls(nodes)
            await store.append_messages(sid, commit)
            assert await evalsha_calls(nodes) - before == calls


async def test_pop_and_replace_are_one_command_each(
    private_factory: Callable[..., RedisStateStore], private_redis_url: str
) -> None:
    CountingConnection.writes = []
    rows = [ChatMessage(role="user", content=str(i)) for i in range(4)]
    async with (
        private_factory(connection_class=CountingConnection) as store,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as admin,
        aredis.Redis.from_url(private_redis_url, decode_responses=True) as watcher,
    ):
        sid = (await store.create_session(user_id="u")).id
        await store.append_messages(sid, MessageCommit(messages=tuple(rows)))
        CountingConnection.writes.clear()
        await admin.ping()
        async with watcher.monitor() as monitor:
            assert await store.pop_messages(sid, 2) == rows[2:]
            result = await store.replace_messages(sid, 1, rows[3:], expect_message_count=2)
            await admin.echo("helix-sentinel")
            sent = await monitored(monitor, "helix-sentinel")
        assert (result.first_index, result.message_count) == (1, 2)
        assert len(CountingConnection.writes) == 2
        assert sent == ["EVALSHA", "EVALSHA"]


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
            for _ in range(6):
                sid, commit = await prepared(store, "monitor-user")
                await store.append_messages(sid, commit)
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
