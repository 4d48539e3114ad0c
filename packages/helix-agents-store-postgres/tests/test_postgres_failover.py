"""Surviving a failover on PostgreSQL (docs/scaling.md, FO-5..FO-12): a primary and a hot
standby of the test's own (``pg_basebackup -R``), the primary killed and the standby
promoted, some of it mid-workload."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from typing import Any, cast
from urllib.parse import quote

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from helix_agents.contract import backend_unavailable
from helix_agents.contract.failover import Workload, run_across_failover
from helix_agents.contract.servers import PostgresPair, start_pair
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StoreUnavailableError,
    ValidationError,
    open_store,
)
from helix_agents.store_postgres import PostgresStateStore, ReplicationLagError, migrate
from helix_agents.store_postgres._pool import Connections
from helix_agents.store_postgres._standby import KEPT, Standby, lsn, lsn_text

from .no_secrets import assert_not_shown

pytestmark = pytest.mark.anyio

LONG = os.environ.get("HELIX_FAILOVER_LONG") == "1"
SECRET = "Pw-7531:@/%"
URL = "postgresql://app:Pw-7531%3A%40%2F%25@db.internal:5432/agents"


def _pair(*, synchronous: bool = True) -> Iterator[PostgresPair]:
    with start_pair(synchronous=synchronous) as pair:
        if isinstance(pair, str):
            backend_unavailable(f"no primary and standby to fail over: {pair}")
        assert not isinstance(pair, str)
        migrate_sync(pair.url("primary"))
        yield pair


def migrate_sync(url: str) -> None:
    """The store's schema (``public``) on the primary; the standby replays it."""

    async def run() -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await migrate(conn, "public")

    asyncio.run(run())


@pytest.fixture
def pair() -> Iterator[PostgresPair]:
    """A primary with a synchronous standby, this test's own (it may kill the primary)."""
    yield from _pair()


@pytest.fixture(scope="module")
def standby_pair() -> Iterator[PostgresPair]:
    """A primary with a synchronous standby, shared by the tests that kill nothing."""
    yield from _pair()


def _hello(commit_id: str) -> MessageCommit:
    return MessageCommit(messages=(ChatMessage(role="user", content="hi"),), commit_id=commit_id)


@pytest.mark.parametrize("value", ["ON", "true", "remote", "", "2"])
def test_FO_10_synchronous_commit_values_are_checked(value: str) -> None:
    keyword: dict[str, Any] = {"synchronous_commit": value}
    for url, options in ((URL, keyword), (f"{URL}?synchronous_commit={value}", {})):
        with pytest.raises(ValidationError) as caught:
            open_store(url, **options)
        assert caught.value.code == "validation_error" and not caught.value.retryable
        assert f"synchronous_commit={value!r}" in str(caught.value)
        assert_not_shown(SECRET, error=caught.value)


@pytest.mark.parametrize("value", [1, True, b"on"])
def test_FO_10_synchronous_commit_must_be_a_name(value: object) -> None:
    with pytest.raises(ValidationError, match="synchronous_commit="):
        PostgresStateStore(URL, synchronous_commit=value)  # type: ignore[arg-type]


async def test_FO_10_synchronous_commit_needs_a_conninfo() -> None:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(URL, open=False)
    with pytest.raises(ValidationError, match="synchronous_commit"):
        PostgresStateStore(pool=pool, synchronous_commit="on")


@pytest.mark.parametrize("value", ["off", "local", "remote_write", "on", "remote_apply"])
async def test_FO_10_synchronous_commit_is_set_on_each_connection(
    value: str, store_on: Callable[..., PostgresStateStore], pg_url: str
) -> None:
    # The conninfo's own options stay; the setting comes with the connection, no statement.
    sep = "&" if "?" in pg_url else "?"  # $HELIX_POSTGRES_URL may carry a query
    url = f"{pg_url}{sep}options=-c%20statement_timeout%3D7s"
    store = store_on(url, synchronous_commit=value)
    async with store:
        session = await store.create_session()
        await store.append_messages(session.id, _hello("c1"))
        for _ in range(2):
            async with store.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT current_setting('synchronous_commit'),"
                    " current_setting('statement_timeout')"
                )
                assert await cur.fetchone() == (value, "7s")
    # From the URL too, PostgreSQL's name for it.
    query = f"synchronous_commit={value}&schema={store.schema}"
    async with open_store(f"{pg_url}{sep}{query}") as other:
        assert isinstance(other, PostgresStateStore)
        async with other.pool.connection() as conn:
            cur = await conn.execute("SHOW synchronous_commit")
            assert await cur.fetchone() == (value,)


async def test_FO_9_multi_host_url_finds_the_promoted_primary(pair: PostgresPair) -> None:
    # remote_apply with the standby's replay paused: a commit waits on the primary, in flight.
    url = pair.multi_host_url("synchronous_commit=remote_apply&operation_timeout=5")
    async with open_store(url) as store:
        assert isinstance(store, PostgresStateStore)
        session = await store.create_session()
        await store.append_messages(session.id, _hello("before"))
        await asyncio.to_thread(pair.pause_replay, True)
        in_flight = asyncio.ensure_future(store.append_messages(session.id, _hello("lost?")))
        await asyncio.sleep(0.5)
        assert not in_flight.done()
        await asyncio.to_thread(pair.kill_primary)
        with pytest.raises(StoreUnavailableError) as caught:
            await in_flight
        # Sent on a connection that broke: the outcome is unknown.
        assert caught.value.retryable and caught.value.may_have_landed
        await asyncio.to_thread(pair.pause_replay, False)
        await asyncio.to_thread(pair.promote)
        failures: list[StoreUnavailableError] = []
        for _ in range(100):
            try:  # retried with its commit id: it lands once, whether it had or not
                await store.append_messages(session.id, _hello("lost?"))
                break
            except StoreUnavailableError as exc:
                failures.append(exc)
                await asyncio.sleep(0.1)
        else:
            pytest.fail(f"never reached the promoted primary: {failures[-1]}")
        assert all(f.retryable for f in failures), failures
        await store.append_messages(session.id, _hello("after"))
        rows = await store.get_messages(session.id)
        stats = store.pool.get_stats()
    with psycopg.connect(pair.url("standby")) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (False,)
    assert len(rows) == 3
    assert stats.get("connections_lost", 0) + stats.get("returns_bad", 0) >= 1


@pytest.mark.parametrize(
    "options",
    [
        {"standby": 5},
        {"standby": f"postgresql://app:{SECRET}@[bad"},
        {"standby": "postgresql://db:99999/x"},
        {"standby": "postgresql://db/x", "standby_wait": 0},
        {"standby_wait": float("nan")},
    ],
)
def test_FO_11_standby_options_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        open_store(URL, **options)
    assert caught.value.code == "validation_error"
    assert_not_shown(SECRET, error=caught.value)


def test_FO_11_standby_password_is_not_shown() -> None:
    hidden = quote(SECRET, safe="")
    store = open_store(URL, standby=f"postgresql://reader:{hidden}@replica.internal/agents")
    assert "replica.internal" in repr(store) and SECRET not in repr(store)


def test_FO_11_the_kept_commits_are_bounded() -> None:
    standby = Standby(cast(Connections, None), 1.0)
    standby.note("nothing", None, None)  # a write that wrote nothing: nothing to wait for
    assert not standby.pending and standby.floor == 0
    for n in range(KEPT + 2):
        standby.note(f"s{n}", str(1000 + n), lsn_text((1 << 32) + 100 * n))
    standby.note("s2", "9999", "1/FFFF")  # a later commit of a kept session replaces it
    assert len(standby.pending) == KEPT and "s0" not in standby.pending
    assert standby.pending["s2"] == ("9999", lsn("1/FFFF"))
    # The oldest folded into a WAL position the standby must reach.
    assert standby.floor == (1 << 32) + 100 and lsn_text(standby.floor) == "1/64"


async def test_FO_11_standby_reads_see_the_stores_own_writes(standby_pair: PostgresPair) -> None:
    pair = standby_pair
    url = f"{pair.url('primary')}?synchronous_commit=local"
    async with open_store(url, standby=pair.url("standby"), standby_wait=5) as store:
        assert isinstance(store, PostgresStateStore) and store.standby_pool is not None
        before = store.standby_pool.get_stats().get("requests_num", 0)
        for number in range(20):  # each read right after its write, on the standby
            session = await store.create_session()
            await store.append_messages(session.id, _hello(f"c{number}"))
            assert await store.get_message_count(session.id) == 1
            assert (await store.get_session(session.id)) is not None
        assert store.standby_pool.get_stats().get("requests_num", 0) > before
        # A read on the standby, not the primary: the standby's data is what it answers.
        await asyncio.to_thread(pair.pause_replay, True)
        try:
            with psycopg.connect(pair.url("primary"), autocommit=True) as conn:
                conn.execute(
                    "UPDATE __agents_sessions SET user_id = 'written-around' WHERE session_id = %s",
                    (session.id,),
                )
            assert (await store.list_sessions("written-around")).sessions == ()
        finally:
            await asyncio.to_thread(pair.pause_replay, False)
        for _ in range(100):  # and once the standby replays the update, it answers it
            if (await store.list_sessions("written-around")).sessions:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the standby never answered the update made on the primary")


async def test_FO_12_a_lagging_standby_is_a_typed_error(standby_pair: PostgresPair) -> None:
    pair = standby_pair
    url = f"{pair.url('primary')}?synchronous_commit=local"
    async with open_store(url, standby=pair.url("standby"), standby_wait=0.3) as store:
        quiet = await store.create_session()
        await store.append_messages(quiet.id, _hello("q1"))
        assert await store.get_message_count(quiet.id) == 1  # seen on the standby
        busy = await store.create_session()
        await store.append_messages(busy.id, _hello("b1"))
        await asyncio.to_thread(pair.pause_replay, True)
        try:
            # From the head the store kept: no read first, the write goes to the primary.
            await store.append_messages(busy.id, _hello("b2"))
            with pytest.raises(ReplicationLagError) as caught:
                await store.get_messages(busy.id)
            error = caught.value
            assert isinstance(error, StoreUnavailableError)
            assert (error.code, error.retryable, error.may_have_landed) == (
                "state_unavailable",
                True,
                False,
            )
            assert error.session_id == busy.id
            # Another session's read waits for nothing; a read across sessions for all.
            assert await store.get_message_count(quiet.id) == 1
            with pytest.raises(ReplicationLagError):
                await store.list_sessions("nobody")
        finally:
            await asyncio.to_thread(pair.pause_replay, False)
        assert await store.get_message_count(busy.id) == 2
        assert (await store.list_sessions("nobody")).sessions == ()


@pytest.mark.parametrize(
    ("durable", "synchronous_commit"), [(True, "on"), (False, "off")], ids=["sync-on", "sync-off"]
)
async def test_FO_5_FO_6_FO_7_FO_8_invariants_across_a_failover(
    pair: PostgresPair,
    durable: bool,
    synchronous_commit: str,
    record_property: Callable[[str, object], None],
) -> None:
    workload = Workload(sessions=8, writers=3, approvals=20, items=40) if LONG else Workload()
    query = f"synchronous_commit={synchronous_commit}&operation_timeout=5"

    async def fail_over() -> None:
        await asyncio.to_thread(pair.kill_primary)
        await asyncio.to_thread(pair.promote)

    async with open_store(pair.multi_host_url(query)) as store:
        assert isinstance(store, PostgresStateStore)
        outcome = await run_across_failover(
            store, fail_over, workload, settle=10.0 if LONG else 1.5
        )
        stats = store.pool.get_stats()
    acked = sum(len(ids) for ids in outcome.acked.values())
    record_property("acknowledged", acked)
    record_property("lost_acknowledged", len(outcome.lost))
    record_property("errors", dict(outcome.errors))
    print(f"{synchronous_commit}: {acked} acknowledged, {len(outcome.lost)} lost, {outcome.errors}")
    # The workload met the dead primary: connections broke under its calls (a read on one is
    # retried on another, so errors reaching the caller may be none).
    met = stats.get("returns_bad", 0) + stats.get("connections_lost", 0)
    assert acked > 0 and met > 0, "the workload must commit, and meet the failover"
    assert outcome.broken(durable=durable) == []
