"""Redis servers for the tests: a standalone server and a three-master Redis Cluster.

Each is found in this order: an env URL (``HELIX_REDIS_URL`` /
``HELIX_REDIS_CLUSTER_URL``), a local server on the default port (standalone
only), ``redis-server`` binaries started here on free loopback ports (stopped
after the session), else the tests are skipped loudly (or fail under
``HELIX_REQUIRE_BACKENDS=1``).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from helix_agents.contract import backend_unavailable
from helix_agents.store_redis import RedisStateStore

PREFIX = "helix-test"


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    # A cluster node also listens on port + 10000 (its bus), so both must be free.
    for _ in range(200):
        port = random.randrange(20000, 50000)
        if _bindable(port) and _bindable(port + 10000):
            return port
    raise RuntimeError("no free loopback port pair for redis-server")


def _answers(url: str) -> bool:
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=0.5) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


class RedisServers:
    """``redis-server`` processes started by the tests, stopped together."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, *extra: str, port: int | None = None) -> int:
        """Start one server on a free loopback port, keeping nothing on disk; its port."""
        binary = shutil.which("redis-server")
        if binary is None:
            backend_unavailable("no Redis server: set HELIX_REDIS_URL or install redis-server")
        port = port or _free_port()
        workdir = self.root / str(port)
        workdir.mkdir(exist_ok=True)
        args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen(
            [binary, *args, "--dir", str(workdir), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs[port] = proc
        deadline = time.monotonic() + 10
        while not _answers(f"redis://127.0.0.1:{port}"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {port} did not start")
            time.sleep(0.05)
        return port

    def restart(self, port: int) -> None:
        """Stop the server on ``port`` and start a fresh one there (empty: nothing on disk)."""
        self._stop([self.procs.pop(port)])
        self.start(port=port)

    def stop(self) -> None:
        """Stop every server started here."""
        self._stop(list(self.procs.values()))
        self.procs.clear()

    @staticmethod
    def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def redis_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServers]:
    """Starts private ``redis-server`` processes on demand; stops them after the session."""
    servers = RedisServers(tmp_path_factory.mktemp("redis"))
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def redis_url(redis_servers: RedisServers) -> str:
    """A standalone Redis: HELIX_REDIS_URL, the local default server, or one started here."""
    url = os.environ.get("HELIX_REDIS_URL") or "redis://127.0.0.1:6379/0"
    if _answers(url):
        return url
    return f"redis://127.0.0.1:{redis_servers.start()}/0"


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


def _start_cluster(servers: RedisServers) -> str:
    ports = [
        servers.start("--cluster-enabled", "yes", "--cluster-node-timeout", "5000")
        for _ in range(3)
    ]
    nodes = [f"127.0.0.1:{port}" for port in ports]
    subprocess.run(
        ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
    )
    deadline = time.monotonic() + 30
    for port in ports:
        with redis.Redis(port=port) as node:
            while node.cluster("INFO").get("cluster_state") != "ok":
                if time.monotonic() > deadline:
                    raise RuntimeError("the test cluster never reached cluster_state:ok")
                time.sleep(0.1)
    return "redis+cluster://" + ",".join(nodes)


@pytest.fixture(scope="session")
def redis_cluster_url(redis_servers: RedisServers) -> str:
    """A three-master Redis Cluster: HELIX_REDIS_CLUSTER_URL, or one started here."""
    url = os.environ.get("HELIX_REDIS_CLUSTER_URL")
    if url:
        return url
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        backend_unavailable("no Redis Cluster: set HELIX_REDIS_CLUSTER_URL or install redis")
    return _start_cluster(redis_servers)


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
