"""A Redis master, its replica and three Sentinels, started from ``redis-server`` on loopback."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import redis

from .._base import backend_unavailable
from ._postgres import free_port
from ._redis import RedisServers, RedisTlsFiles

__all__ = ["MASTER", "SentinelGroup"]

MASTER = "helix"
_NO_SYNC_DELAY = ("--repl-diskless-sync-delay", "0")


class SentinelGroup:
    """A master and a replica (``RedisServers``' processes) watched by three Sentinels.

    The Sentinels call the master down after 500 ms without an answer, and two of
    them are a quorum. With ``tls`` every process speaks only TLS, to clients and to
    each other (with ``client_certs``, wanting a client certificate that ``tls``' CA
    signed); with ``password`` the master and the replica want it (and use it with each
    other and from the Sentinels); with ``sentinel_password`` the Sentinels want that
    one (and use it with each other).
    """

    def __init__(
        self,
        servers: RedisServers,
        root: Path,
        *,
        tls: RedisTlsFiles | None = None,
        client_certs: bool = False,
        password: str | None = None,
        sentinel_password: str | None = None,
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            backend_unavailable("no redis-server to start a Sentinel group with")
        self.servers = servers
        self.tls, self.password, self.sentinel_password = tls, password, sentinel_password
        self.client_certs = "yes" if client_certs else "no"
        self.master_port = self._start_node()
        self.replica_port = self._start_node("--replicaof", "127.0.0.1", str(self.master_port))
        self.sentinels: dict[int, subprocess.Popen[bytes]] = {}
        for _ in range(3):
            port = free_port()
            config = root / f"sentinel-{port}.conf"
            config.write_text(self._sentinel_config(port, root))
            self.sentinels[port] = subprocess.Popen(
                [binary, str(config), "--sentinel"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        self._wait_until_watched()

    def url(self, query: str = "", *, userinfo: str = "") -> str:
        """The group's ``redis+sentinel://`` URL, with ``query`` (and ``userinfo@``)."""
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinels)
        auth = f"{userinfo}@" if userinfo else ""
        return f"redis+sentinel://{auth}{hosts}/{MASTER}/0" + (f"?{query}" if query else "")

    def client(self, port: int) -> redis.Redis:
        """A client of the group's process on ``port`` (a Sentinel or a data node), with the
        group's TLS and the password that process wants."""
        password = self.sentinel_password if port in self.sentinels else self.password
        tls = self.tls
        return redis.Redis(
            port=port,
            password=password,
            socket_timeout=1,
            decode_responses=True,
            ssl=tls is not None,
            ssl_ca_certs=None if tls is None else str(tls.ca),
            ssl_certfile=None if tls is None else str(tls.cert),
            ssl_keyfile=None if tls is None else str(tls.key),
        )

    def master(self) -> tuple[str, int] | None:
        """The master's address as the first Sentinel that answers names it."""
        for port in self.sentinels:
            try:
                with self.client(port) as s:
                    host, found = s.sentinel_get_master_addr_by_name(MASTER)
                    return str(host), int(found)
            except (redis.RedisError, TypeError):
                continue
        return None

    def kill_master(self) -> None:
        """SIGKILL the master's process: no shutdown, nothing more sent to the replica."""
        proc = self.servers.procs[self.master_port]
        proc.kill()
        proc.wait()

    def wait_for_promotion(self, timeout: float = 20.0) -> None:
        """Return once the Sentinels name the replica as master and it accepts writes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.master() == ("127.0.0.1", self.replica_port):
                with self.client(self.replica_port) as r:
                    if r.info("replication")["role"] == "master":
                        return
            time.sleep(0.1)
        raise RuntimeError("the Sentinels did not promote the replica")

    def rejoin(self) -> None:
        """Start the killed master again, empty, as a replica of the promoted one."""
        self._start_node("--replicaof", "127.0.0.1", str(self.replica_port), port=self.master_port)

    def stop(self) -> None:
        """Stop the Sentinels (the servers are stopped with ``RedisServers``)."""
        for proc in self.sentinels.values():
            proc.kill()
            proc.wait()
        for port in (self.master_port, self.replica_port):
            if port in self.servers.procs:
                proc = self.servers.procs.pop(port)
                proc.kill()
                proc.wait()

    def _wait_until_watched(self, timeout: float = 20.0) -> None:
        """Wait until the replica is in sync and every Sentinel knows it and the two others."""
        deadline = time.monotonic() + timeout
        with self.client(self.replica_port) as replica:
            while replica.info("replication")["master_link_status"] != "up":
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        waiting = set(self.sentinels)
        while waiting and time.monotonic() < deadline:
            for port in list(waiting):
                try:
                    with self.client(port) as s:
                        state = s.sentinel_master(MASTER)
                except redis.RedisError:
                    continue
                if state["num-slaves"] == 1 and state["num-other-sentinels"] == 2:
                    waiting.discard(port)
            time.sleep(0.1)
        if waiting:
            self.stop()
            raise RuntimeError(f"Sentinels {sorted(waiting)} did not see the whole group")

    def _start_node(self, *extra: str, port: int | None = None) -> int:
        # No waiting for more replicas before a full sync (Redis waits 5 s by default).
        options = [*_NO_SYNC_DELAY, *extra]
        if self.tls is not None:
            options += ["--tls-replication", "yes", "--tls-auth-clients", self.client_certs]
        if self.password is not None:
            options += ["--masterauth", self.password]
        return self.servers.start(*options, port=port, tls=self.tls, password=self.password)

    def _sentinel_config(self, port: int, root: Path) -> str:
        lines = ["bind 127.0.0.1", f"dir {root}"]
        if self.tls is None:
            lines.append(f"port {port}")
        else:
            # tls-replication: TLS to the master, the replica and the other Sentinels too.
            lines += ["port 0", f"tls-port {port}", "tls-replication yes"]
            lines.append(f"tls-auth-clients {self.client_certs}")
            lines += [f"tls-cert-file {self.tls.cert}", f"tls-key-file {self.tls.key}"]
            lines += [f"tls-ca-cert-file {self.tls.ca}"]
        if self.sentinel_password is not None:
            lines += [
                f"requirepass {self.sentinel_password}",
                f"sentinel sentinel-pass {self.sentinel_password}",
            ]
        lines += [
            f"sentinel monitor {MASTER} 127.0.0.1 {self.master_port} 2",
            f"sentinel down-after-milliseconds {MASTER} 500",
            f"sentinel failover-timeout {MASTER} 5000",
        ]
        if self.password is not None:
            lines.append(f"sentinel auth-pass {MASTER} {self.password}")
        return "\n".join(lines) + "\n"
