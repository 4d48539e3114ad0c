"""Round trips per operation, counted on the wire by a proxy between the store and the server.

The proxy reads the client's side of the PostgreSQL protocol: every request
that waits for the server's answer ends with ``Sync`` (extended protocol) or
is a ``Query`` (simple protocol), so counting those counts round trips.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from helix_agents.contract._helpers import item
from helix_agents.core import (
    ChatMessage,
    ContextItemDelivery,
    ContextMessage,
    MessageCommit,
    StartRun,
    StateStoreError,
)
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

pytestmark = pytest.mark.anyio

_SSL_OR_GSS = {80877103, 80877104}
_ROUND_TRIP_ENDS = {b"S", b"Q"}


class CountingProxy:
    """A loopback TCP proxy to the server that counts the client's round trips."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.round_trips = 0
        self.kinds: list[str] = []
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.server.wait_closed()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(*self.target)
        up = asyncio.create_task(self._client_to_server(client_r, server_w))
        down = asyncio.create_task(_pipe(server_r, client_w))
        self.tasks |= {up, down}
        await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for writer in (client_w, server_w):
            writer.close()

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        startup = True
        while True:
            if startup:  # untyped: length, then a code (SSL/GSS request, or the startup message)
                head = await reader.readexactly(8)
                length, code = struct.unpack("!ii", head)
                body = head + await reader.readexactly(length - 8)
                startup = code in _SSL_OR_GSS
            else:
                head = await reader.readexactly(5)
                kind, length = head[:1], struct.unpack("!i", head[1:])[0]
                body = head + await reader.readexactly(length - 4)
                self.kinds.append(kind.decode())
                if kind in _ROUND_TRIP_ENDS:
                    self.round_trips += 1
            writer.write(body)
            await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()


@pytest.fixture
async def proxy(pg_url: str) -> AsyncIterator[tuple[CountingProxy, str]]:
    """A counting proxy to the server, and the URL that goes through it."""
    target = psycopg.conninfo.conninfo_to_dict(pg_url)
    counter = CountingProxy(
        str(target.get("host", "127.0.0.1")), int(str(target.get("port", 5432)))
    )
    port = await counter.start()
    url = psycopg.conninfo.make_conninfo(
        pg_url, host="127.0.0.1", port=port, sslmode="disable", gssencmode="disable"
    )
    try:
        yield counter, url
    finally:
        await counter.close()


@pytest.fixture
async def counted(
    proxy: tuple[CountingProxy, str], migrated: str
) -> AsyncIterator[tuple[PostgresStateStore, CountingProxy]]:
    """A store whose only connection goes through the counting proxy, preparing nothing (a
    prepared statement's first use on a connection costs one more: see below)."""
    counter, url = proxy
    settings = PoolSettings(min_size=1, max_size=1)
    async with PostgresStateStore(
        url, schema=migrated, pool_settings=settings, prepare="off"
    ) as store:
        yield store, counter


async def test_the_proxy_counts_every_round_trip(proxy: tuple[CountingProxy, str]) -> None:
    """The counter itself: a statement in an explicit transaction is three round trips."""
    counter, url = proxy
    async with await psycopg.AsyncConnection.connect(url) as conn:
        before = counter.round_trips
        await conn.execute("SELECT %s::int", [1])  # BEGIN, then the statement
        await conn.commit()  # COMMIT
        assert counter.round_trips - before == 3


def _user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


async def _count(counter: CountingProxy, operation: Any) -> int:
    before = counter.round_trips
    with contextlib.suppress(StateStoreError):  # a refusal costs its round trips too
        await operation
    return counter.round_trips - before


async def test_a_plain_append_after_a_read_is_one_round_trip(
    counted: tuple[PostgresStateStore, CountingProxy],
) -> None:
    """The hot path: a plain append (rows, at most an expected count) planned from the last
    head seen is one call of ``__agents_apply``; a stale count is refused in that same call."""
    store, proxy = counted
    await store.create_session("s")
    opened = len(proxy.kinds)
    first = MessageCommit(messages=(_user("a"),), expect_message_count=0)
    # create_session leaves the new session's head: its first append is one call too.
    assert await _count(proxy, store.append_messages("s", first)) == 1
    for n in range(1, 4):
        plain = MessageCommit(messages=(_user("b"),), expect_message_count=n)
        assert await _count(proxy, store.append_messages("s", plain)) == 1
    assert await _count(proxy, store.append_messages("s", MessageCommit(messages=()))) == 1
    stale = MessageCommit(messages=(_user("d"),), expect_message_count=0)
    assert await _count(proxy, store.append_messages("s", stale)) == 1  # refused: still one
    assert await _count(proxy, store.get_message_count("s")) == 1
    await store.create_session("t")
    assert await _count(proxy, store.get_message_count("t")) == 1  # a read keeps the head...
    plain = MessageCommit(messages=(_user("x"),))
    assert await _count(proxy, store.append_messages("t", plain)) == 1  # ...for the next append
    # The statements were sent as extended-protocol requests, with no BEGIN/COMMIT around them.
    assert "Q" not in proxy.kinds[opened:]


async def test_a_commit_that_needs_more_than_the_head_reads_first(
    counted: tuple[PostgresStateStore, CountingProxy],
) -> None:
    """A commit id, a run start or a delivery needs the snapshot's answers: a read, then the
    apply; a replay is answered by the read alone."""
    store, proxy = counted
    await store.create_session("s")
    await store.record_context_item("s", item("k"))
    started = MessageCommit(
        messages=(ContextMessage(kind="notice", content="n"), _user("b")),
        start_run=StartRun(run_id="r1"),
        deliver_context_items=(ContextItemDelivery(key="k", row_offset=0),),
        commit_id="c1",
    )
    assert await _count(proxy, store.append_messages("s", started)) == 2
    assert await _count(proxy, store.append_messages("s", started)) == 1  # replayed
    fenced = MessageCommit(messages=(_user("c"),), fence_run_id="r1", expect_message_count=2)
    assert await _count(proxy, store.append_messages("s", fenced)) == 1
    assert await store.get_message_count("s") == 3


async def test_other_operations(counted: tuple[PostgresStateStore, CountingProxy]) -> None:
    """Every read is one statement; a write that needs only the head is one after a read,
    one that needs more is a read and the apply."""
    store, proxy = counted
    assert await _count(proxy, store.create_session("s", user_id="u")) == 1
    await store.append_messages("s", MessageCommit(messages=(_user("a"), _user("b"))))
    for operation, trips in (
        (store.get_session("s"), 1),
        (store.get_messages("s", limit=1), 1),
        (store.page_messages("s", limit=1, order="desc"), 1),
        (store.get_message_count("s"), 1),
        (store.list_sessions("u"), 1),
        (store.list_undelivered_context_items("s"), 1),
        (store.list_pending_approvals("s"), 1),
        (store.latest_checkpoint("s"), 1),
        (store.get_scoped_state("user", "u"), 1),
        (store.truncate_messages("s", 1), 1),
        (store.append_messages("s", MessageCommit(messages=(_user("b"), _user("c")))), 1),
        (store.pop_messages("s"), 2),  # the rows it returns: a read, then the apply
        (store.pop_messages("s", 5), 2),
        (store.pop_messages("s"), 1),  # an empty log: the read says so
        (store.replace_messages("s", 0, [_user("x"), _user("y")], expect_message_count=0), 1),
        (store.replace_messages("s", 1, [_user("z")], expect_message_count=9), 1),  # refused
        (store.finish_run("s", "r", "completed"), 1),  # refused (no run): the read says so
        (store.clone_session("s", "t"), 2),  # the source's head, then the copy
        (store.clear_session("t"), 2),  # no head of the clone seen yet: a read first
        (store.clear_session("t"), 1),
        (store.delete_session("t"), 1),
    ):
        assert await _count(proxy, operation) == trips


async def test_under_contention_a_refusal_carries_the_snapshot(
    proxy: tuple[CountingProxy, str], migrated: str
) -> None:
    """Two stores append to one session in turns: each append finds the head it last saw
    stale, and the refusal's snapshot lets it plan again at once: two round trips, never
    three; a stale expected count is refused in one."""
    counter, url = proxy
    settings = PoolSettings(min_size=1, max_size=1)
    async with (
        PostgresStateStore(url, schema=migrated, pool_settings=settings, prepare="off") as a,
        PostgresStateStore(url, schema=migrated, pool_settings=settings, prepare="off") as b,
    ):
        await a.create_session("s")
        await a.get_message_count("s")
        await b.get_message_count("s")
        plain = MessageCommit(messages=(_user("x"),))
        assert await _count(counter, a.append_messages("s", plain)) == 1  # its head is current
        for store in (b, a, b, a):  # each finds the other moved the session
            assert await _count(counter, store.append_messages("s", plain)) == 2
        count = await a.get_message_count("s")
        await b.append_messages("s", MessageCommit(messages=(_user("y"),)))
        stale = MessageCommit(messages=(_user("z"),), expect_message_count=count)
        assert await _count(counter, a.append_messages("s", stale)) == 1


async def test_a_prepared_statement_costs_one_more_round_trip_on_first_use_only(
    proxy: tuple[CountingProxy, str], migrated: str
) -> None:
    """With ``prepare=auto`` the first call of a statement on a connection prepares it (one
    more round trip); every later call is one, as unprepared."""
    counter, url = proxy
    settings = PoolSettings(min_size=1, max_size=1)
    async with PostgresStateStore(url, schema=migrated, pool_settings=settings) as store:
        assert store.prepared_statements
        opened = len(counter.kinds)  # opening the store read the migrations table
        assert await _count(counter, store.create_session("s")) == 2
        assert await _count(counter, store.create_session("t")) == 1
        assert await _count(counter, store.get_message_count("s")) == 2
        assert await _count(counter, store.get_message_count("t")) == 1
        for n, sid in enumerate(("s", "s", "t")):
            commit = MessageCommit(messages=(_user("a"),))
            assert await _count(counter, store.append_messages(sid, commit)) == (2 if n == 0 else 1)
        assert "Q" not in counter.kinds[opened:]
