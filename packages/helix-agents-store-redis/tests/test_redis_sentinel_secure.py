"""``redis+sentinel://`` with TLS and with passwords (docs/scaling.md, FO-1, FO-2), live: a
master, a replica and three Sentinels of this module's own that speak only TLS and want a
client certificate (all from the CA the fixtures make), and a group whose servers and
Sentinels want passwords."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix_agents.contract.failover import append_after_failover
from helix_agents.contract.servers import RedisServers, RedisTlsFiles, SentinelGroup, free_port
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StateStoreError,
    StoreUnavailableError,
    open_store,
)
from helix_agents.core.errors import StoreMisconfiguredError

pytestmark = pytest.mark.anyio

SECRET = "data-s3cret"
SENTINEL_SECRET = "watch-s3cret"


@pytest.fixture(autouse=True)
def _collect_leaks() -> Iterator[None]:
    """Collect what a test left unreachable while its own warning filters still apply (the
    connections redis-py's Sentinel client drops across a failover: test_redis_failover.py)."""
    yield
    gc.collect()


@pytest.fixture(scope="module")
def tls_group(
    redis_servers: RedisServers, tls_files: RedisTlsFiles, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SentinelGroup]:
    """A group whose master, replica and Sentinels speak only TLS, to clients and to each
    other, and want a client certificate. The last test of the module fails its master over."""
    root = tmp_path_factory.mktemp("sentinel-tls")
    found = SentinelGroup(redis_servers, root, tls=tls_files, client_certs=True)
    yield found
    found.stop()


@pytest.fixture(scope="module")
def auth_group(
    redis_servers: RedisServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SentinelGroup]:
    """A group whose master and replica want ``SECRET`` and whose Sentinels want
    ``SENTINEL_SECRET``."""
    found = SentinelGroup(
        redis_servers,
        tmp_path_factory.mktemp("sentinel-auth"),
        password=SECRET,
        sentinel_password=SENTINEL_SECRET,
    )
    yield found
    found.stop()


@pytest.fixture(scope="module")
def tls_query(tls_files: RedisTlsFiles) -> str:
    """The TLS options of a store on ``tls_group``: our CA, and a certificate it signed."""
    return f"ssl=true&ssl_ca_certs={tls_files.ca}&" + _client_cert(tls_files)


def _client_cert(tls: RedisTlsFiles) -> str:
    return f"ssl_certfile={tls.cert}&ssl_keyfile={tls.key}"


def _hello(commit_id: str) -> MessageCommit:
    return MessageCommit(messages=(ChatMessage(role="user", content="hi"),), commit_id=commit_id)


async def _round_trip(url: str, group: SentinelGroup) -> None:
    """Open a store on ``url``, write a session and read it back, through the store and
    straight from the master's port."""
    async with open_store(url) as store:
        session = await store.create_session()
        await store.append_messages(session.id, _hello("c1"))
        assert [m.content for m in await store.get_messages(session.id)] == ["hi"]
    with group.client(group.master_port) as master:
        assert any(session.id in key for key in master.scan_iter("fo1:*"))


async def _open_fails(url: str) -> StateStoreError:
    with pytest.raises(StateStoreError) as caught:
        async with open_store(url):
            pass
    assert SECRET not in str(caught.value) and SENTINEL_SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value.args) and SENTINEL_SECRET not in repr(caught.value.args)
    return caught.value


async def test_FO_1_sentinel_store_with_passwords_writes_to_the_master(
    auth_group: SentinelGroup,
) -> None:
    url = auth_group.url(
        f"key_prefix=fo1&sentinel_password={SENTINEL_SECRET}", userinfo=f":{SECRET}"
    )
    await _round_trip(url, auth_group)


@pytest.mark.parametrize(
    ("sentinel_password", "password", "refused_by"),
    [
        ("wrong-pw", SECRET, "Sentinel"),
        ("", SECRET, "Sentinel"),
        (SENTINEL_SECRET, "wrong-pw", "master"),
        (SENTINEL_SECRET, "", "master"),
    ],
    ids=["wrong-sentinel-pw", "no-sentinel-pw", "wrong-master-pw", "no-master-pw"],
)
async def test_FO_1_a_wrong_or_missing_password_fails_typed_naming_no_password(
    auth_group: SentinelGroup, sentinel_password: str, password: str, refused_by: str
) -> None:
    query = "key_prefix=fo1" + (f"&sentinel_password={sentinel_password}" * bool(sentinel_password))
    err = await _open_fails(auth_group.url(query, userinfo=f":{password}" * bool(password)))
    assert isinstance(err, StoreMisconfiguredError) and not err.retryable, err
    assert "refused the store: authentication failed" in str(err), err
    # A Sentinel's refusal names that Sentinel, not redis-py's summary of every lookup.
    assert (": Sentinel 127.0.0.1:" in str(err)) == (refused_by == "Sentinel"), err
    assert "wrong-pw" not in str(err) and "MasterNotFoundError" not in str(err), err


async def test_FO_1_no_sentinel_answering_is_retryable_naming_one() -> None:
    port = free_port()
    err = await _open_fails(f"redis+sentinel://:{SECRET}@127.0.0.1:{port}/helix")
    assert isinstance(err, StoreUnavailableError) and err.retryable, err
    assert f": Sentinel 127.0.0.1:{port} failed: " in str(err), err
    assert "Connect" in str(err) and "MasterNotFoundError" not in str(err), err


async def test_FO_1_sentinel_store_over_tls_writes_to_the_master(
    tls_group: SentinelGroup, tls_query: str
) -> None:
    await _round_trip(tls_group.url(f"key_prefix=fo1&{tls_query}"), tls_group)


async def test_FO_1_ssl_cert_reqs_reaches_the_sentinels_too(
    tls_group: SentinelGroup, tls_files: RedisTlsFiles
) -> None:
    # No CA: only ssl_cert_reqs=none lets either connection through.
    query = "key_prefix=fo1&ssl=true&ssl_cert_reqs=none&" + _client_cert(tls_files)
    await _round_trip(tls_group.url(query), tls_group)


@pytest.mark.parametrize("ca", ["none", "other"])
async def test_FO_1_tls_without_the_ca_fails_typed(
    tls_group: SentinelGroup, tls_files: RedisTlsFiles, ca: str
) -> None:
    query = f"ssl=true&{_client_cert(tls_files)}"
    query += f"&ssl_ca_certs={tls_files.other_ca}" * (ca == "other")
    err = await _open_fails(tls_group.url(query))
    assert isinstance(err, StoreMisconfiguredError) and not err.retryable, err
    assert ": Sentinel 127.0.0.1:" in str(err) and "refused the store: TLS failed" in str(err)
    assert "CERTIFICATE_VERIFY_FAILED" in str(err), err


async def test_FO_1_tls_without_a_client_certificate_fails_typed(
    tls_group: SentinelGroup, tls_ca: Path
) -> None:
    err = await _open_fails(tls_group.url(f"ssl=true&ssl_ca_certs={tls_ca}"))
    assert ": Sentinel 127.0.0.1:" in str(err), err
    if isinstance(err, StoreMisconfiguredError):  # the server's alert reached the client
        assert not err.retryable and "refused the store: TLS failed" in str(err), err
        assert "CERTIFICATE_REQUIRED" in str(err), err
    else:  # TLS 1.3: the server's close won the race with its alert (docs/scaling.md)
        assert isinstance(err, StoreUnavailableError) and err.retryable, err
        assert "does it want TLS" in str(err), err


@pytest.mark.parametrize("query", ["", "sentinel_ssl=false"], ids=["plain", "plain-sentinels"])
async def test_FO_1_plain_connections_to_tls_sentinels_fail_hinting_at_tls(
    tls_group: SentinelGroup, tls_query: str, query: str
) -> None:
    err = await _open_fails(tls_group.url(f"{tls_query}&{query}" if query else ""))
    assert isinstance(err, StoreUnavailableError), err
    assert ": Sentinel 127.0.0.1:" in str(err), err
    assert "does it want TLS (ssl=true or sentinel_ssl=true)?" in str(err), err


async def test_FO_1_a_missing_ca_file_fails_naming_it(
    tls_group: SentinelGroup, tls_files: RedisTlsFiles, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.pem"
    query = f"ssl=true&ssl_ca_certs={missing}&{_client_cert(tls_files)}"
    err = await _open_fails(tls_group.url(query))
    assert isinstance(err, StoreMisconfiguredError), err
    assert "TLS failed" in str(err) and str(missing) in str(err), err


# Last in the module: it kills the TLS group's master.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_FO_1_FO_2_tls_store_follows_a_failover(
    tls_group: SentinelGroup, tls_query: str
) -> None:
    async with open_store(tls_group.url(f"key_prefix=fo2&{tls_query}")) as store:
        session = await store.create_session()
        await store.append_messages(session.id, _hello("before"))
        await asyncio.to_thread(tls_group.kill_master)
        await asyncio.to_thread(tls_group.wait_for_promotion)
        failures = await append_after_failover(store, session.id, _hello("after"))
        assert all(f.retryable for f in failures) and len(failures) <= 2
        assert len(await store.get_messages(session.id)) == 2
    with tls_group.client(tls_group.replica_port) as promoted:
        assert promoted.info("replication")["role"] == "master"
