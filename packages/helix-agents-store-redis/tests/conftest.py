"""Redis servers for the tests: a standalone server and a three-master Redis Cluster.

Both come from the shared finder (``helix_agents.contract.servers``, in the order of
CONTRIBUTING.md: env URL, local default port, ``redis-server`` binaries started on
free loopback ports, a Docker container for the standalone one), else the tests are
skipped loudly (or fail under ``HELIX_REQUIRE_BACKENDS=1``).

The fault tests always use servers of their own, started here: one that wants
a password, one that speaks only TLS (with a CA made here), ones they freeze
with SIGSTOP, a private cluster, and a cluster that speaks only TLS.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import redis
import trustme
from redis.cluster import RedisCluster

from helix_agents.contract import backend_unavailable
from helix_agents.contract.servers import RedisServers, RedisTlsFiles, start_cluster
from helix_agents.store_redis import RedisStateStore

PREFIX = "helix-test"


@pytest.fixture(scope="session")
def redis_url(helix_redis_url: str) -> str:
    """A standalone Redis (the shared finder's: CONTRIBUTING.md)."""
    return helix_redis_url


@pytest.fixture(scope="session")
def private_redis_url(redis_servers: RedisServers, redis_url: str) -> str:
    """A standalone server for the fault tests alone (they pause, flush and block it).

    Started here when ``redis-server`` is installed, else the shared one.
    """
    if shutil.which("redis-server") is None:
        return redis_url
    return f"redis://127.0.0.1:{redis_servers.start()}/0"


@pytest.fixture
def restartable_redis(redis_servers: RedisServers) -> tuple[str, Callable[[], None]]:
    """A server of this test's own, and a function that restarts it empty."""
    port = redis_servers.start()
    return f"redis://127.0.0.1:{port}/0", lambda: redis_servers.restart(port)


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> RedisTlsFiles:
    """A CA made here, a certificate it signed for 127.0.0.1, and an unrelated CA."""
    root = tmp_path_factory.mktemp("tls")
    ca, other = trustme.CA(), trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    files = RedisTlsFiles(
        root / "ca.pem", root / "server.pem", root / "server.key", root / "other.pem"
    )
    ca.cert_pem.write_to_path(str(files.ca))
    other.cert_pem.write_to_path(str(files.other_ca))
    issued.cert_chain_pems[0].write_to_path(str(files.cert))
    issued.private_key_pem.write_to_path(str(files.key))
    return files


@pytest.fixture(scope="session")
def tls_ca(tls_files: RedisTlsFiles) -> Path:
    """The CA that signed the TLS server's certificate."""
    return tls_files.ca


@pytest.fixture(scope="session")
def tls_other_ca(tls_files: RedisTlsFiles) -> Path:
    """A CA that signed nothing the servers use."""
    return tls_files.other_ca


@pytest.fixture(scope="session")
def tls_redis_port(redis_servers: RedisServers, tls_files: RedisTlsFiles) -> int:
    """The port of a server of the tests' own that speaks only TLS."""
    return redis_servers.start(tls=tls_files)


@pytest.fixture(scope="session")
def tls_cluster_url(redis_servers: RedisServers, tls_files: RedisTlsFiles) -> str:
    """A three-master cluster of the tests' own whose nodes speak only TLS (to clients and
    on the cluster bus); its ``redis+cluster://`` URL, no query."""
    if shutil.which("redis-cli") is None:
        backend_unavailable("no redis-cli to make a TLS cluster with")
    return start_cluster(redis_servers, tls_files)


@pytest.fixture(scope="session")
def auth_redis_port(redis_servers: RedisServers) -> int:
    """A server of the tests' own: the default user's password is ``right-pw``, user
    ``ada`` (password ``ada-pw``) may do everything, user ``reader`` (``reader-pw``) only read."""
    return redis_servers.start(
        *("--user", "ada", "on", ">ada-pw", "~*", "&*", "+@all"),
        *("--user", "reader", "on", ">reader-pw", "~*", "+@read", "+@connection"),
        password="right-pw",
    )


@pytest.fixture
def frozen_redis(
    redis_servers: RedisServers,
) -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A server of this test's own, a function that freezes it and one that thaws it."""
    port = redis_servers.start()
    yield (
        f"redis://127.0.0.1:{port}/0",
        lambda: redis_servers.freeze(port),
        lambda: redis_servers.thaw(port),
    )
    redis_servers.thaw(port)


@pytest.fixture(scope="session")
def redis_cluster_url(helix_redis_cluster_url: str) -> str:
    """A three-master Redis Cluster (the shared finder's: CONTRIBUTING.md)."""
    return helix_redis_cluster_url


@pytest.fixture(scope="session")
def freezable_cluster_url(request: pytest.FixtureRequest, redis_servers: RedisServers) -> str:
    """A cluster whose node processes were started here: the session's, unless that one
    comes from the env."""
    if os.environ.get("HELIX_REDIS_CLUSTER_URL"):
        if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
            backend_unavailable("no redis-server/redis-cli to start a cluster to freeze")
        return start_cluster(redis_servers)
    url: str = request.getfixturevalue("redis_cluster_url")
    return url


@pytest.fixture
def cluster_freezer(
    freezable_cluster_url: str, redis_servers: RedisServers
) -> Iterator[tuple[str, Callable[[int], None], Callable[[int], None]]]:
    """The cluster, and functions that freeze and thaw the node on a port (thawed at the end).

    Keep a node frozen well under the cluster's node timeout (5 s), or the cluster fails.
    """
    frozen: set[int] = set()

    def freeze(port: int) -> None:
        frozen.add(port)
        redis_servers.freeze(port)

    def thaw(port: int) -> None:
        frozen.discard(port)
        redis_servers.thaw(port)

    yield freezable_cluster_url, freeze, thaw
    for port in frozen:
        redis_servers.thaw(port)


def drop_keys(url: str, namespace: str) -> None:
    """Delete every key under ``helix-test:<namespace>:`` (on every primary of a cluster)."""
    pattern = f"{PREFIX}:{namespace}:*"
    if url.startswith("redis+cluster://"):
        host, port = url.removeprefix("redis+cluster://").split(",")[0].split(":")
        with RedisCluster(host=host, port=int(port)) as cluster:
            for key in cluster.scan_iter(match=pattern, target_nodes=RedisCluster.PRIMARIES):
                cluster.delete(key)
        return
    with redis.Redis.from_url(url) as client:
        for key in client.scan_iter(match=pattern):
            client.delete(key)


def make_factory(url: str, stack: ExitStack, **defaults: Any) -> Callable[..., RedisStateStore]:
    """Stores on ``url`` under a namespace of their own, whose keys go when ``stack`` closes."""
    namespace = f"t{uuid.uuid4().hex[:12]}"
    stack.callback(drop_keys, url, namespace)

    def factory(**options: Any) -> RedisStateStore:
        return RedisStateStore(
            url, key_prefix=PREFIX, namespace=namespace, **{**defaults, **options}
        )

    return factory


@pytest.fixture
def standalone_factory(redis_url: str) -> Iterator[Callable[..., RedisStateStore]]:
    """Fresh stores on the standalone server, under a namespace of this test's own."""
    with ExitStack() as stack:
        yield make_factory(redis_url, stack)


@pytest.fixture
def private_factory(private_redis_url: str) -> Iterator[Callable[..., RedisStateStore]]:
    """Fresh stores on the fault tests' own server."""
    with ExitStack() as stack:
        yield make_factory(private_redis_url, stack)


@pytest.fixture
def cluster_factory(redis_cluster_url: str) -> Iterator[Callable[..., RedisStateStore]]:
    """Fresh stores on the cluster, under a namespace of this test's own."""
    with ExitStack() as stack:
        yield make_factory(redis_cluster_url, stack)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is seen for seen in found):
            continue
        found.append(current)
        todo += [current.__cause__, current.__context__]
    return found


@pytest.fixture
def assert_hidden(caplog: pytest.LogCaptureFixture) -> Callable[..., None]:
    """``check(secret, *shown)``: the secret is in none of ``shown`` (their str, repr, args,
    whole ``__cause__``/``__context__`` chains) nor in any log record of the test."""
    caplog.set_level(logging.DEBUG)

    def check(secret: str, *shown: object) -> None:
        texts = [logging.Formatter().format(record) for record in caplog.records]
        for thing in shown:
            things = _chain(thing) if isinstance(thing, BaseException) else [thing]
            texts += [f"{t!s} {t!r} {getattr(t, 'args', '')!r}" for t in things]
        leaks = [text for text in texts if secret in text]
        assert not leaks, f"{secret!r} leaked: {leaks}"

    return check
