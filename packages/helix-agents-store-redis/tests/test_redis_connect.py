"""Connection failures fail fast, typed, with the server's reason and no secret; TLS end to end."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import redis.exceptions

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StateStoreError,
    StoreUnavailableError,
    open_store,
)
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-pw"


async def open_fails(url: str, **options: Any) -> tuple[StateStoreError, float]:
    """The error of opening a store on ``url``, and how long it took to come."""
    store = open_store(url, **options)
    started = time.monotonic()
    with pytest.raises(StateStoreError) as caught:
        async with store:
            pass
    return caught.value, time.monotonic() - started


def misconfigured(err: StateStoreError, *words: str) -> StoreMisconfiguredError:
    assert isinstance(err, StoreMisconfiguredError), err
    assert err.code == "state_misconfigured" and not err.retryable
    for word in words:
        assert word in str(err), (word, str(err))
    return err


def unavailable(err: StateStoreError) -> StoreUnavailableError:
    assert isinstance(err, StoreUnavailableError), err
    assert err.code == "state_unavailable" and err.retryable and not err.may_have_landed
    return err


async def round_trip(url: str) -> None:
    async with open_store(url, namespace="conn") as store:
        sid = (await store.create_session()).id
        row = ChatMessage(role="user", content="hi")
        await store.append_messages(sid, MessageCommit(messages=(row,)))
        assert await store.get_messages(sid) == [row]
        assert await store.delete_session(sid)


# Passwords and users


@pytest.mark.parametrize("userinfo", ["", "ada:ada-pw@", ":right-pw@", "default:right-pw@"])
async def test_right_credentials_work(auth_redis_port: int, userinfo: str) -> None:
    # The server really wants a password: only right ones get through.
    url = f"redis://{userinfo}127.0.0.1:{auth_redis_port}/0"
    if not userinfo:
        misconfigured((await open_fails(url))[0], "authentication")
    else:
        await round_trip(url)


@pytest.mark.parametrize("user", ["", "ada", "nobody"])
async def test_wrong_password_is_misconfigured_fast_and_names_the_cause(
    auth_redis_port: int, user: str, assert_hidden: Callable[..., None]
) -> None:
    url = f"redis://{user}:{SECRET}@127.0.0.1:{auth_redis_port}/0"
    err, took = await open_fails(url)
    misconfigured(err, "authentication failed", "invalid username-password pair")
    assert took < 2
    assert isinstance(err.__cause__, redis.exceptions.AuthenticationError)
    assert_hidden(SECRET, err)


async def test_acl_user_without_the_store_s_commands_is_misconfigured(
    auth_redis_port: int,
) -> None:
    err, _ = await open_fails(f"redis://reader:reader-pw@127.0.0.1:{auth_redis_port}/0")
    misconfigured(err, "(ACL)", "no permissions")
    assert isinstance(err.__cause__, redis.exceptions.NoPermissionError)


async def test_password_set_under_a_running_store_is_misconfigured_at_its_next_connection(
    restartable_redis: tuple[str, Callable[[], None]], assert_hidden: Callable[..., None]
) -> None:
    url, _ = restartable_redis
    async with RedisStateStore(url) as store:
        sid = (await store.create_session()).id
        admin = store.client
        await admin.config_set("requirepass", SECRET)
        await admin.client_kill_filter(_type="normal", skipme=False)  # ours too
        # The pooled connection died: the first call may say so (retryable); the next
        # connection is refused for good.
        with contextlib.suppress(StoreUnavailableError):
            await store.get_session(sid)
        with pytest.raises(StoreMisconfiguredError) as caught:
            await store.get_session(sid)
    misconfigured(caught.value, "authentication failed")
    assert caught.value.session_id == sid
    assert_hidden(SECRET, caught.value)


async def test_password_from_keyword_never_shows(
    auth_redis_port: int, assert_hidden: Callable[..., None]
) -> None:
    store = RedisStateStore(f"redis://127.0.0.1:{auth_redis_port}/0", password=SECRET)
    with pytest.raises(StoreMisconfiguredError) as caught:
        await store.__aenter__()
    assert_hidden(SECRET, caught.value, store)


async def test_db_out_of_range_is_misconfigured(
    private_redis_url: str, assert_hidden: Callable[..., None]
) -> None:
    url = private_redis_url.rsplit("/", 1)[0].replace("redis://", f"redis://:{SECRET}@") + "/99"
    err, took = await open_fails(url)
    misconfigured(err, "no such database", "DB index is out of range")
    assert took < 2 and isinstance(err.__cause__, redis.exceptions.ResponseError)
    assert_hidden(SECRET, err)


# Nothing there, or not Redis


async def test_refused_port_is_unavailable_fast(assert_hidden: Callable[..., None]) -> None:
    err, took = await open_fails(f"redis://:{SECRET}@127.0.0.1:1/0")
    assert "connecting to 127.0.0.1:1" in str(unavailable(err))
    assert took < 2 and isinstance(err.__cause__, redis.exceptions.ConnectionError)
    assert_hidden(SECRET, err)


async def test_unresolvable_host_is_unavailable_within_the_connect_timeout(
    assert_hidden: Callable[..., None],
) -> None:
    url = f"redis://:{SECRET}@helix-no-such-host.invalid:6379/0"
    err, took = await open_fails(url, connect_timeout=2)
    assert "helix-no-such-host.invalid" in str(unavailable(err))
    assert took < 3
    assert_hidden(SECRET, err)


@pytest.fixture
async def http_port() -> AsyncIterator[int]:
    """A server on loopback that answers anything with an HTTP error."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def test_non_redis_server_is_misconfigured(
    http_port: int, assert_hidden: Callable[..., None]
) -> None:
    err, took = await open_fails(f"redis://:{SECRET}@127.0.0.1:{http_port}/0")
    misconfigured(err, "does not speak the Redis protocol", "HTTP/1.1 400")
    assert took < 2
    assert_hidden(SECRET, err)


# TLS


async def test_tls_with_our_ca_works_end_to_end(tls_redis_port: int, tls_ca: Path) -> None:
    await round_trip(f"rediss://127.0.0.1:{tls_redis_port}/0?ssl_ca_certs={tls_ca}")


async def test_a_plain_url_on_a_tls_server_hints_at_rediss(tls_redis_port: int) -> None:
    err, _ = await open_fails(f"redis://127.0.0.1:{tls_redis_port}/0")
    unavailable(err)
    assert "does it want rediss://?" in str(err), err


async def test_tls_against_plain_redis_fails_fast_saying_tls(
    private_redis_url: str, tls_ca: Path, assert_hidden: Callable[..., None]
) -> None:
    plain = private_redis_url.removeprefix("redis://")
    url = f"rediss://:{SECRET}@{plain}?ssl_ca_certs={tls_ca}"
    err, took = await open_fails(url)  # the connect timeout is 5 s: this must not wait it out
    misconfigured(err, "TLS", "plain Redis")
    assert took < 2
    assert_hidden(SECRET, err)


async def test_tls_with_a_missing_ca_file_says_tls(tls_redis_port: int, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.pem"
    err, _ = await open_fails(f"rediss://127.0.0.1:{tls_redis_port}/0?ssl_ca_certs={missing}")
    misconfigured(err, "TLS", "ssl_ca_certs", str(missing))


@pytest.mark.parametrize("ca", ["other", "system"])
async def test_tls_with_a_ca_that_did_not_sign_says_certificate(
    tls_redis_port: int, tls_other_ca: Path, ca: str, assert_hidden: Callable[..., None]
) -> None:
    url = f"rediss://:{SECRET}@127.0.0.1:{tls_redis_port}/0"
    if ca == "other":
        url = f"{url}?ssl_ca_certs={tls_other_ca}"
    err, took = await open_fails(url)
    misconfigured(err, "TLS failed", "CERTIFICATE_VERIFY_FAILED")
    assert took < 2
    assert_hidden(SECRET, err)


# The wrong kind of Redis, or a setting it refuses


async def test_cluster_url_on_a_standalone_server_is_misconfigured(private_redis_url: str) -> None:
    cluster_url = private_redis_url.replace("redis://", "redis+cluster://").rsplit("/", 1)[0]
    err, took = await open_fails(cluster_url)
    misconfigured(err, "not a Redis Cluster")
    assert took < 2


async def test_cluster_url_with_a_wrong_password_is_misconfigured(
    auth_redis_port: int, assert_hidden: Callable[..., None]
) -> None:
    err, _ = await open_fails(f"redis+cluster://:{SECRET}@127.0.0.1:{auth_redis_port}")
    misconfigured(err, "authentication failed")
    assert_hidden(SECRET, err)


async def test_standalone_url_on_a_cluster_node_is_misconfigured_at_the_first_moved(
    redis_cluster_url: str,
) -> None:
    nodes = redis_cluster_url.removeprefix("redis+cluster://").split(",")
    # Some of these sessions live on other nodes: the node answers MOVED.
    errors: list[StateStoreError] = []
    async with RedisStateStore(f"redis://{nodes[0]}/0", namespace="moved") as store:
        for n in range(20):
            try:
                assert await store.get_session(f"s{n}") is None
            except StateStoreError as caught:
                errors.append(caught)
    assert errors  # a third of the slots are this node's: 20 misses are (1/3)**20 likely
    for error in errors:
        misconfigured(error, "use redis+cluster://")


async def test_a_setting_the_server_refuses_at_connect_is_misconfigured(
    private_redis_url: str,
) -> None:
    err, _ = await open_fails(private_redis_url, client_name="has spaces")
    misconfigured(err, "refused a connection setting", "Client names cannot contain")
