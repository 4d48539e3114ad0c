"""URL and option parsing: every bad value a ValidationError naming it, no secret echoed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis.asyncio as aredis

from helix_agents.core import ValidationError, open_store
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-pw"
PLAIN = "redis://127.0.0.1:6379/0"


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("redis://127.0.0.1:6379/abc", {}, "'/abc'"),  # redis-py would use db 0
    (f"redis://:{SECRET}@127.0.0.1:6379/abc", {}, "database"),
    (f"redis://:{SECRET}@127.0.0.1:6379/0?db=abc", {}, "'db'"),
    (f"redis://:{SECRET}@127.0.0.1:abc/0", {}, "port 'abc'"),
    (f"redis://:{SECRET}@127.0.0.1:99999/0", {}, "port '99999'"),
    (f"redis://:{SECRET}@[::1/0", {}, "malformed"),
    (f"redis+cluster://:{SECRET}@127.0.0.1:7000,127.0.0.1:x", {}, "'127.0.0.1:x'"),
    (f"redis+cluster://:{SECRET}@", {}, "no host:port"),
    (f"rediss://127.0.0.1:6379/x?ssl_password={SECRET}", {}, "database"),
    (f"{PLAIN}?idle_ttl=nan", {}, "idle_ttl"),
    (f"{PLAIN}?idle_ttl=inf", {}, "idle_ttl"),
    (f"{PLAIN}?idle_ttl=abc", {}, "idle_ttl"),
    (PLAIN, {"idle_ttl": float("nan")}, "idle_ttl"),
    (PLAIN, {"idle_ttl": float("-inf")}, "idle_ttl"),
    (PLAIN, {"idle_ttl": -1}, "idle_ttl"),
    (PLAIN, {"idle_ttl": 1e300}, "idle_ttl"),
    (PLAIN, {"operation_timeout": -1}, "operation_timeout"),
    (PLAIN, {"operation_timeout": 0}, "operation_timeout"),
    (PLAIN, {"operation_timeout": float("inf")}, "operation_timeout"),
    (PLAIN, {"operation_timeout": "1"}, "operation_timeout"),
    (PLAIN, {"operation_timeout": True}, "operation_timeout"),
    (PLAIN, {"connect_timeout": float("nan")}, "connect_timeout"),
    (PLAIN, {"connect_timeout": timedelta(0)}, "connect_timeout"),
    (f"{PLAIN}?operation_timeout=abc", {}, "operation_timeout"),
    (f"{PLAIN}?connect_timeout=-1", {}, "connect_timeout"),
    (f"{PLAIN}?max_messages=1.5", {}, "max_messages"),
    (PLAIN, {"max_messages": 0}, "max_messages"),
    (f"redis://:{SECRET}@127.0.0.1/0", {"no_such_option": 1}, "no_such_option"),
    (f"redis+cluster://:{SECRET}@127.0.0.1:7000", {"no_such_option": 1}, "no_such_option"),
    (PLAIN, {"max_connections": -1}, "max_connections"),
    (PLAIN, {"socket_timeout": 1}, "operation_timeout"),
    (f"{PLAIN}?socket_connect_timeout=1", {}, "connect_timeout"),
    # redis-py reads any text but "no" as true, and checks protocol only when it connects.
    (f"{PLAIN}?socket_keepalive=abc", {}, "socket_keepalive"),
    (f"{PLAIN}?protocol=9", {}, "protocol"),
    # Named as an unknown option, not as redis-py's TypeError of a constructor.
    (f"{PLAIN}?no_such_option=1", {}, "unknown option 'no_such_option'"),
    (f"redis+cluster://:{SECRET}@127.0.0.1:7000?no_such=1", {}, "unknown option 'no_such'"),
]


@pytest.mark.parametrize("make", [open_store, RedisStateStore], ids=["open_store", "class"])
@pytest.mark.parametrize(("url", "options", "named"), BAD)
def test_bad_url_or_option_is_a_validation_error_naming_it_without_secrets(
    make: Callable[..., Any],
    url: str,
    options: dict[str, Any],
    named: str,
    assert_hidden: Callable[..., None],
) -> None:
    with pytest.raises(ValidationError) as caught:
        make(url, **options)
    err = caught.value
    assert err.code == "validation_error" and not err.retryable
    assert named in str(err)
    assert_hidden(SECRET, err)


def test_not_a_redis_url_is_refused_without_its_password(
    assert_hidden: Callable[..., None],
) -> None:
    with pytest.raises(ValidationError) as caught:
        RedisStateStore(f"mysql://app:{SECRET}@127.0.0.1/0")
    assert "not a Redis URL" in str(caught.value)
    assert_hidden(SECRET, caught.value)


def test_timeouts_have_documented_defaults() -> None:
    store = RedisStateStore(PLAIN)
    assert (store.timeouts.operation, store.timeouts.connect) == (10.0, 5.0)


async def test_timeouts_from_url_and_keywords_reach_the_client(redis_url: str) -> None:
    store = open_store(
        f"{redis_url}?operation_timeout=1.5&connect_timeout=0.25&max_messages=3",
        connect_timeout=timedelta(seconds=2),
    )
    assert isinstance(store, RedisStateStore)
    assert (store.timeouts.operation, store.timeouts.connect) == (1.5, 2.0)
    assert store.max_messages == 3
    async with store:
        client = store.client
        assert isinstance(client, aredis.Redis)
        settings = client.connection_pool.connection_kwargs
        assert (settings["socket_timeout"], settings["socket_connect_timeout"]) == (1.5, 2.0)
        assert (await store.create_session()).message_count == 0


def test_cluster_client_gets_the_timeouts() -> None:
    store = RedisStateStore("redis+cluster://127.0.0.1:7000", operation_timeout=0.75)
    assert (store.timeouts.operation, store.timeouts.connect) == (0.75, 5.0)


def test_store_options_in_the_url_work_through_the_class_too() -> None:
    store = RedisStateStore(f"{PLAIN}?key_prefix=kp&idle_ttl=30&operation_timeout=3")
    assert store.options.keys.base == "kp:" and store.options.idle_ttl_ms == 30_000
    assert store.timeouts.operation == 3.0
    keyword = RedisStateStore(f"{PLAIN}?key_prefix=kp", key_prefix="kw")
    assert keyword.options.keys.base == "kw:"


@pytest.mark.parametrize(
    "options", [{"operation_timeout": 1}, {"connect_timeout": 1}, {"client_name": "x"}]
)
async def test_borrowed_client_refuses_settings_it_would_ignore(
    redis_url: str, options: dict[str, Any]
) -> None:
    client = aredis.Redis.from_url(redis_url)
    try:
        with pytest.raises(ValidationError):
            RedisStateStore(client=client, **options)
    finally:
        await client.aclose()


def test_repr_shows_where_but_no_password(assert_hidden: Callable[..., None]) -> None:
    store = RedisStateStore(f"rediss://ada:{SECRET}@127.0.0.1:6379/0?ssl_password={SECRET}")
    assert "127.0.0.1:6379/0" in repr(store)
    assert_hidden(SECRET, store)


@pytest.mark.parametrize(
    "options", [{"health_check_interval": "x"}, {"encoding": "nope"}, {"retry": "x"}]
)
async def test_redis_py_option_of_the_wrong_type_is_a_validation_error(
    redis_url: str, options: dict[str, Any]
) -> None:
    # redis-py finds some only when it connects: at the latest, opening the store says so.
    with pytest.raises(ValidationError):
        async with RedisStateStore(redis_url, **options):
            pass


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"url": PLAIN, "client": aredis.Redis()},
        {"url": 6379},
        {"url": b"redis://127.0.0.1/0"},
        {"client": object()},
        {"url": PLAIN, "clock": "now"},
    ],
    ids=["neither", "both", "int-url", "bytes-url", "not-a-client", "clock"],
)
def test_constructor_arguments_of_the_wrong_kind_are_validation_errors(
    arguments: dict[str, Any],
) -> None:
    with pytest.raises(ValidationError):
        RedisStateStore(**arguments)
