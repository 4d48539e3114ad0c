"""What the contract leaves to each backend: URLs, options, a borrowed client, the listing index."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
import redis.asyncio as aredis

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StoreUnavailableError,
    ValidationError,
    open_store,
)
from helix_agents.core.clock import utcnow
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio


def one_row(text: str = "hi") -> MessageCommit:
    return MessageCommit(messages=(ChatMessage(role="user", content=text),))


async def test_open_store_by_url_with_query_options(redis_url: str) -> None:
    namespace = f"url{uuid.uuid4().hex[:8]}"
    url = f"{redis_url}?key_prefix=helix-test&idle_ttl=30&max_messages=2"
    store = open_store(url, namespace=namespace)
    assert isinstance(store, RedisStateStore)
    assert store.options.keys.base == f"helix-test:{namespace}:"
    assert (store.options.idle_ttl_ms, store.options.max_messages) == (30_000, 2)
    async with store:
        sid = (await store.create_session()).id
        for text in ("a", "b", "c"):
            await store.append_messages(sid, one_row(text))
        assert await store.get_message_count(sid) == 3
        assert await store.get_messages(sid) == [
            ChatMessage(role="user", content="b"),
            ChatMessage(role="user", content="c"),
        ]
        assert 0 < await store.client.pttl(store.options.keys.meta(sid)) <= 30_000
        assert await store.delete_session(sid)


async def test_open_store_by_cluster_url(redis_cluster_url: str) -> None:
    async with open_store(redis_cluster_url, namespace=f"url{uuid.uuid4().hex[:8]}") as store:
        assert isinstance(store, RedisStateStore) and store.cluster
        sid = (await store.create_session(user_id="u")).id
        await store.append_messages(sid, one_row())
        assert [s.id for s in (await store.list_sessions("u")).sessions] == [sid]
        assert await store.delete_session(sid)
        assert (await store.list_sessions("u")).sessions == ()


@pytest.mark.parametrize(
    "options",
    [{"key_prefix": "a{b"}, {"namespace": "x}"}, {"idle_ttl": 0}, {"max_messages": 0}],
)
def test_bad_options_are_validation_errors(redis_url: str, options: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RedisStateStore(redis_url, **options)  # type: ignore[arg-type]


async def test_borrowed_client_without_decoding_stays_open(redis_url: str) -> None:
    client = aredis.Redis.from_url(redis_url)  # bytes replies: the store must not care
    namespace = f"b{uuid.uuid4().hex[:8]}"
    try:
        async with RedisStateStore(
            client=client, key_prefix="helix-test", namespace=namespace
        ) as s:
            info = await s.create_session("x", user_id="u", metadata={"k": [1, "v"]})
            await s.append_messages("x", one_row())
            assert await s.get_session("x") == info.model_copy(
                update={
                    "last_activity_at": (await s.get_session("x")).last_activity_at,  # type: ignore[union-attr]
                    "message_count": 1,
                }
            )
            assert [x.id for x in (await s.list_sessions("u")).sessions] == ["x"]
            assert await s.delete_session("x")
        with pytest.raises(StoreUnavailableError) as caught:
            await s.get_session("x")
        assert not caught.value.may_have_landed
        assert await client.ping()  # the store closed only what it opened
    finally:
        await client.aclose()


@pytest.mark.parametrize("decode", [True, False])
async def test_row_reads_split_only_between_rows(redis_url: str, decode: bool) -> None:
    # Reads join the rows with newlines in one reply; text with line breaks must survive.
    client = aredis.Redis.from_url(redis_url, decode_responses=decode)
    texts = ["a\nb", "\r\n", "\n", "x\u2028y\u0085z", "é\n中", ""]
    rows = [ChatMessage(role="user", content=t) for t in texts]
    try:
        async with RedisStateStore(client=client, namespace=f"nl{uuid.uuid4().hex[:8]}") as s:
            sid = (await s.create_session()).id
            await s.append_messages(sid, MessageCommit(messages=tuple(rows)))
            assert await s.get_messages(sid) == rows
            assert await s.get_messages(sid, limit=2) == rows[-2:]
            assert await s.get_messages(sid, limit=0) == []
            for order in ("asc", "desc"):
                seen: list[ChatMessage] = []
                cursor = None
                while True:
                    page = await s.page_messages(sid, limit=4, cursor=cursor, order=order)
                    seen.extend(page.messages)  # type: ignore[arg-type]
                    if (cursor := page.next_cursor) is None:
                        break
                assert seen == (rows if order == "asc" else rows[::-1])
            assert await s.delete_session(sid)
    finally:
        await client.aclose()


async def test_the_default_clock_stamps_writes_with_the_current_time(
    standalone_factory: Callable[..., RedisStateStore],
) -> None:
    """Without a ``clock`` the store stamps writes with the time ``utcnow()`` gives at that
    moment (``StoreBase._now``)."""
    async with standalone_factory() as store:
        before = utcnow()
        sid = (await store.create_session()).id
        created = utcnow()
        await store.append_messages(sid, one_row())
        after = utcnow()
        info = await store.get_session(sid)
        assert info is not None
        assert before <= info.created_at <= created <= info.last_activity_at <= after


async def test_unreachable_server_is_store_unavailable() -> None:
    store = RedisStateStore("redis://127.0.0.1:1/0", connect_timeout=0.5)
    with pytest.raises(StoreUnavailableError) as caught:
        await store.__aenter__()
    assert not caught.value.may_have_landed


@pytest.mark.parametrize("where", ["standalone", "cluster"])
async def test_listing_skips_prunes_and_repairs_its_index(
    where: str, request: pytest.FixtureRequest
) -> None:
    factory: Callable[..., RedisStateStore] = request.getfixturevalue(f"{where}_factory")
    async with factory() as store:
        keys, client = store.options.keys, store.client
        index = keys.user("u")
        old = await store.create_session("old", user_id="u")
        new = await store.create_session("new", user_id="u")
        # What lost second steps leave behind: an entry of a session that is gone,
        # one of a session that belongs to someone else, one behind its session.
        await client.zadd(index, {"ghost": -1, "theirs": -2})
        await store.create_session("theirs", user_id="v")
        await client.zadd(index, {"new": -100})
        page = await store.list_sessions("u", first=1)
        assert [s.id for s in page.sessions] == ["old"]
        rest = await store.list_sessions("u", first=1, cursor=page.next_cursor)
        assert [s.id for s in rest.sessions] == ["new"] and rest.next_cursor is None
        assert rest.sessions[0].last_activity_at == new.last_activity_at
        assert await client.zscore(index, "ghost") is None
        assert await client.zscore(index, "theirs") is None
        # Repaired: the entry is back at its session's activity time, newest first.
        assert [s.id for s in (await store.list_sessions("u")).sessions] == ["new", "old"]
        assert old.last_activity_at < new.last_activity_at
