"""A Redis master, its replica and three Sentinels, started from ``redis-server`` on loopback."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import redis

from .._base import backend_unavailable
from ._postgres import free_port
from ._redis import RedisServers

__all__ = ["MASTER", "SentinelGroup"]

MASTER = "helix"
_NO_SYNC_DELAY = ("--repl-diskless-sync-delay", "0")


class SentinelGroup:
    """A master and a replica (``RedisServers``' processes) watched by three Sentinels.

    The Sentinels call the master down after 500 ms without an answer, and two of
    them are a quorum.
    """

    def __init__(self, servers: RedisServers, root: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            backend_unavailable("no redis-server to start a Sentinel group with")
        self.servers = servers
        # No waiting for more replicas before a full sync (Redis waits 5 s by default).
        self.master_port = servers.start(*_NO_SYNC_DELAY)
        self.replica_port = servers.start(
            *_NO_SYNC_DELAY, "--replicaof", "127.0.0.1", str(self.master_port)
        )
        self.sentinels: dict[int, subprocess.Popen[bytes]] = {}
        for _ in range(3):
            port = free_port()
            config = root / f"sentinel-{port}.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {root}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {self.master_port} 2\n"
                f"sentinel down-after-milliseconds {MASTER} 500\n"
                f"sentinel failover-timeout {MASTER} 5000\n"
            )
            self.sentinels[port] = subprocess.Popen(
                [binary, str(config), "--sentinel"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        self._wait_until_watched()

    def url(self, query: str = "") -> str:
        """The group's ``redis+sentinel://`` URL, with ``query``."""
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinels)
        return f"redis+sentinel://{hosts}/{MASTER}/0" + (f"?{query}" if query else "")

    def master(self) -> tuple[str, int] | None:
        """The master's address as the first Sentinel that answers names it."""
        for port in self.sentinels:
            try:
                with redis.Redis(port=port, socket_timeout=1, decode_responses=True) as s:
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
                with redis.Redis(port=self.replica_port, decode_responses=True) as r:
                    if r.info("replication")["role"] == "master":
                        return
            time.sleep(0.1)
        raise RuntimeError("the Sentinels did not promote the replica")

    def rejoin(self) -> None:
        """Start the killed master again, empty, as a replica of the promoted one."""
        self.servers.start(
            *_NO_SYNC_DELAY,
            "--replicaof",
            "127.0.0.1",
            str(self.replica_port),
            port=self.master_port,
        )

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
        with redis.Redis(port=self.replica_port, decode_responses=True) as replica:
            while replica.info("replication")["master_link_status"] != "up":
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        waiting = set(self.sentinels)
        while waiting and time.monotonic() < deadline:
            for port in list(waiting):
                try:
                    with redis.Redis(port=port, socket_timeout=1, decode_responses=True) as s:
                        state = s.sentinel_master(MASTER)
                except redis.RedisError:
                    continue
                if state["num-slaves"] == 1 and state["num-other-sentinels"] == 2:
                    waiting.discard(port)
            time.sleep(0.1)
        if waiting:
            self.stop()
            raise RuntimeError(f"Sentinels {sorted(waiting)} did not see the whole group")
