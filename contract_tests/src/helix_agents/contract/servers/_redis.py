"""Finding Redis and a Redis Cluster for the tests, and ``redis-server`` processes they
start on free loopback ports (plain, with a password, TLS-only, frozen with SIGSTOP)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from helix_agents.core.backend import redact_url

from .._base import backend_unavailable
from ._docker import in_container
from ._search import Outcome, Search, Step, search

__all__ = [
    "REDIS_CLUSTER_ENV",
    "REDIS_ENV",
    "REDIS_URLS",
    "RedisServers",
    "RedisTlsFiles",
    "find_redis",
    "find_redis_cluster",
    "redis_answers",
    "start_cluster",
]

REDIS_ENV = "HELIX_REDIS_URL"
REDIS_CLUSTER_ENV = "HELIX_REDIS_CLUSTER_URL"
REDIS_URLS = ("redis://127.0.0.1:6379/0",)


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


def redis_answers(url: str) -> bool:
    """Whether a Redis server answers PING at ``url``."""
    import redis

    try:
        with redis.Redis.from_url(url, socket_connect_timeout=0.5) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


@dataclass(frozen=True)
class RedisTlsFiles:
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
        tls: RedisTlsFiles | None = None,
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
        auth = "" if password is None else f":{password}@"
        ready = f"redis://{auth}127.0.0.1:{port}"
        if tls is not None:
            args += ["--port", "0", "--tls-port", str(port), "--tls-auth-clients", "no"]
            args += ["--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key)]
            args += ["--tls-ca-cert-file", str(tls.ca)]
            # With a client certificate, for a server started with ``--tls-auth-clients yes``.
            ready = (
                f"rediss://{auth}127.0.0.1:{port}/0?ssl_ca_certs={tls.ca}"
                f"&ssl_certfile={tls.cert}&ssl_keyfile={tls.key}"
            )
        if password is not None:
            args += ["--requirepass", password]
        proc = subprocess.Popen(
            [binary, *args, "--dir", str(workdir), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs[port] = proc
        deadline = time.monotonic() + 10
        while not redis_answers(ready):
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


def start_cluster(servers: RedisServers, tls: RedisTlsFiles | None = None) -> str:
    """A three-master cluster of servers started by ``servers``; its ``redis+cluster://`` URL.

    With ``tls`` the nodes speak only TLS, to clients and to each other (cluster bus too).
    """
    import redis

    extra = ["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]
    if tls is not None:
        extra += ["--tls-cluster", "yes", "--tls-replication", "yes"]
    ports = [servers.start(*extra, tls=tls) for _ in range(3)]
    nodes = [f"127.0.0.1:{port}" for port in ports]
    cli = ["redis-cli"] if tls is None else ["redis-cli", "--tls", "--cacert", str(tls.ca)]
    subprocess.run(
        [*cli, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
    )
    deadline = time.monotonic() + 30
    for port in ports:
        url = f"redis://127.0.0.1:{port}/0" if tls is None else tls.url(port)
        with redis.Redis.from_url(url) as node:
            while node.cluster("INFO").get("cluster_state") != "ok":
                if time.monotonic() > deadline:
                    raise RuntimeError("the test cluster never reached cluster_state:ok")
                time.sleep(0.1)
    return "redis+cluster://" + ",".join(nodes)


def _from_env(name: str) -> Step:
    def step(stack: ExitStack) -> Outcome:
        url = os.environ.get(name)
        if not url:
            return Outcome(None, "not set")
        if name == REDIS_CLUSTER_ENV or redis_answers(url):
            return Outcome(url)
        return Outcome(None, f"{redact_url(url)} does not answer", final=True)

    return step


def _binaries(path: str | None, *names: str) -> str | None:
    missing = [name for name in names if shutil.which(name, path=path) is None]
    if not missing:
        return None
    return (
        f"no {' or '.join(missing)} on {'$PATH' if path is None else path} (Debian: redis-server)"
    )


def find_redis(
    stack: ExitStack,
    servers: RedisServers,
    *,
    local_urls: tuple[str, ...] = REDIS_URLS,
    path: str | None = None,
    docker: bool = True,
) -> Search:
    """A standalone Redis, found in the order of CONTRIBUTING.md: ``$HELIX_REDIS_URL``
    (used alone when set), ``local_urls``, ``redis-server`` on ``path`` started by
    ``servers``, a Docker container (stopped when ``stack`` closes)."""

    def local(stack: ExitStack) -> Outcome:
        return Outcome(next((u for u in local_urls if redis_answers(u)), None), "nothing answers")

    def binaries(stack: ExitStack) -> Outcome:
        missing = _binaries(path, "redis-server")
        if missing:
            return Outcome(None, missing)
        return Outcome(f"redis://127.0.0.1:{servers.start()}/0")

    ports = ", ".join(sorted({u.split("//", 1)[1].split("/", 1)[0] for u in local_urls}))
    steps: list[tuple[str, Step]] = [
        (f"${REDIS_ENV}", _from_env(REDIS_ENV)),
        (f"local server ({ports or 'none'})", local),
        ("local binaries", binaries),
    ]
    if docker:
        steps.append(("Docker", lambda stack: in_container("redis", stack)))
    return search("Redis", steps, stack)


def find_redis_cluster(
    stack: ExitStack, servers: RedisServers, *, path: str | None = None
) -> Search:
    """A three-master Redis Cluster: ``$HELIX_REDIS_CLUSTER_URL``, else one made of
    ``redis-server`` processes on ``path`` (no container: a cluster's nodes announce
    addresses a client outside Docker cannot reach)."""

    def binaries(stack: ExitStack) -> Outcome:
        missing = _binaries(path, "redis-server", "redis-cli")
        return Outcome(None, missing) if missing else Outcome(start_cluster(servers))

    steps: list[tuple[str, Step]] = [
        (f"${REDIS_CLUSTER_ENV}", _from_env(REDIS_CLUSTER_ENV)),
        ("local binaries", binaries),
    ]
    return search("Redis Cluster", steps, stack)
