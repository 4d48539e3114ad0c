"""Redis servers for the tests: a standalone server and a three-master Redis Cluster.

Each is found in this order: an env URL (``HELIX_REDIS_URL`` /
``HELIX_REDIS_CLUSTER_URL``), a local server on the default port (standalone
only), ``redis-server`` binaries started here on free loopback ports (stopped
after the session), else the tests are skipped loudly (or fail under
``HELIX_REQUIRE_BACKENDS=1``).

The fault tests always use servers of their own, started here: one that wants
a password, one that speaks only TLS (with a CA made here), ones they freeze
with SIGSTOP, and a private cluster.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import trustme
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


@dataclass(frozen=True)
class TlsFiles:
    """A CA made for the tests, a server certificate it signed, and a CA that signed nothing."""

    ca: Path
    cert: Path
    key: Path
    other_ca: Path

    def url(self, port: int, ca: Path | None = None) -> str:
        """A ``rediss://`` URL of the server on ``port`` that trusts ``ca`` (default: ours)."""
        return f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={ca or self.ca}"


class RedisServers:
    """``redis-server`` processes started by the tests, stopped together."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(
        self,
        *extra: str,
        port: int | None = None,
        tls: TlsFiles | None = None,
        password: str | None = None,
    ) -> int:
        """Start one server on a free loopback port, keeping nothing on disk; its port.

        With ``tls`` it speaks only TLS; with ``password`` the default user needs it.
        """
        binary = shutil.which("redis-server")
        if binary is None:
            backend_unavailable("no Redis server: set HELIX_REDIS_URL or install redis-server")
        port = port or _free_port()
        workdir = self.root / str(port)
        workdir.mkdir(exist_ok=True)
        args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        ready = f"redis://{'' if password is None else f':{password}@'}127.0.0.1:{port}"
        if tls is not None:
            args += ["--port", "0", "--tls-port", str(port), "--tls-auth-clients", "no"]
            args += ["--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key)]
            args += ["--tls-ca-cert-file", str(tls.ca)]
            ready = tls.url(port)
        if password is not None:
            args += ["--requirepass", password]
        proc = subprocess.Popen(
            [binary, *args, "--dir", str(workdir), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs[port] = proc
        deadline = time.monotonic() + 10
        while not _answers(ready):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {port} did not start")
            time.sleep(0.05)
        return port

    def freeze(self, port: int) -> None:
        """Stop the server's process (SIGSTOP): it keeps its sockets but answers nothing."""
        self.procs[port].send_signal(signal.SIGSTOP)

    def thaw(self, port: int) -> None:
        """Let a frozen server run again (SIGCONT)."""
        self.procs[port].send_signal(signal.SIGCONT)

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
            proc.send_signal(signal.SIGCONT)  # a frozen server would not see SIGTERM
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


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A CA made here, a certificate it signed for 127.0.0.1, and an unrelated CA."""
    root = tmp_path_factory.mktemp("tls")
    ca, other = trustme.CA(), trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    files = TlsFiles(root / "ca.pem", root / "server.pem", root / "server.key", root / "other.pem")
    ca.cert_pem.write_to_path(str(files.ca))
    other.cert_pem.write_to_path(str(files.other_ca))
    issued.cert_chain_pems[0].write_to_path(str(files.cert))
    issued.private_key_pem.write_to_path(str(files.key))
    return files


@pytest.fixture(scope="session")
def tls_ca(tls_files: TlsFiles) -> Path:
    """The CA that signed the TLS server's certificate."""
    return tls_files.ca


@pytest.fixture(scope="session")
def tls_other_ca(tls_files: TlsFiles) -> Path:
    """A CA that signed nothing the servers use."""
    return tls_files.other_ca


@pytest.fixture(scope="session")
def tls_redis_port(redis_servers: RedisServers, tls_files: TlsFiles) -> int:
    """The port of a server of the tests' own that speaks only TLS."""
    return redis_servers.start(tls=tls_files)


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


@pytest.fixture(scope="session")
def freezable_cluster_url(request: pytest.FixtureRequest, redis_servers: RedisServers) -> str:
    """A cluster whose node processes were started here: the session's, unless that one
    comes from the env."""
    if os.environ.get("HELIX_REDIS_CLUSTER_URL"):
        if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
            backend_unavailable("no redis-server/redis-cli to start a cluster to freeze")
        return _start_cluster(redis_servers)
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
