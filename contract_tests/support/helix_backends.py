"""Stores on the four backends for the adapters' tests and the frameworks' own suites.

A server is found by the finder every package shares (``helix_agents.contract.servers``:
env URL, local default port, local binaries, a Docker container; CONTRIBUTING.md);
otherwise :func:`server_url` says why not, naming each place tried, and the caller
skips (or fails, under ``HELIX_REQUIRE_BACKENDS=1``). Every store is
opened under a namespace of the run (a SQLite file, a Postgres schema, a Redis
key prefix), which :meth:`Stores.purge` removes.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import redis
from psycopg import sql

from helix_agents.contract.servers import RedisServers, find_postgres, find_redis
from helix_agents.core import SessionStateStore, open_store
from helix_agents.store_memory import MemoryData, MemoryStateStore

BACKENDS = ("memory", "sqlite", "postgres", "redis")
REDIS_PREFIX = "helix-adapter-test"


def server_url(backend: str, stack: ExitStack) -> tuple[str | None, str]:
    """The server URL of ``backend`` (``None`` for memory and SQLite), or why there is none.

    A server started to find one (binaries, a container) stops when ``stack`` closes.
    """
    if backend in ("memory", "sqlite"):
        return None, ""
    if backend == "postgres":
        found = find_postgres(stack)
    else:
        root = Path(tempfile.mkdtemp(prefix="helix-adapter-redis-"))
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        servers = RedisServers(root)
        stack.callback(servers.stop)
        found = find_redis(stack, servers)
    return found.url, "" if found.url else found.reason


class Stores:
    """Stores of one backend, one per key; stores of one key share their data."""

    def __init__(self, backend: str, url: str | None, workdir: Path) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
        self.backend = backend
        self.url = url
        self.workdir = workdir
        self.run = uuid.uuid4().hex[:10]
        self._memory: dict[str, MemoryData] = {}
        self._namespaces: dict[str, str] = {}
        # Sessions built in several threads (each with its event loop) open stores at once.
        self._guard = threading.Lock()

    def _namespace(self, key: str | None) -> str:
        if key is None:
            return f"{self.run}_{uuid.uuid4().hex[:12]}"
        with self._guard:
            return self._namespaces.setdefault(key, f"{self.run}_{uuid.uuid4().hex[:12]}")

    def forget_keys(self) -> None:
        """Give every key fresh data from now on (keys built from object ids recur across tests)."""
        with self._guard:
            self._namespaces.clear()
            self._memory.clear()

    def store(self, key: str | None = None, **options: Any) -> SessionStateStore:
        """A store (not yet entered) on the data of ``key``; ``None``: data of its own."""
        namespace = self._namespace(key)
        if self.backend == "memory":
            with self._guard:
                data = self._memory.setdefault(namespace, MemoryData())
            return MemoryStateStore(data, **options)
        if self.backend == "sqlite":
            self.workdir.mkdir(parents=True, exist_ok=True)
            return open_store(f"sqlite:///{self.workdir / f'{namespace}.db'}", **options)
        assert self.url is not None
        if self.backend == "postgres":
            return open_store(self.url, namespace=f"adp_{namespace}", auto_migrate=True, **options)
        return open_store(
            self.url, namespace=f"adp-{namespace}", key_prefix=REDIS_PREFIX, **options
        )

    def purge(self) -> None:
        """Drop what this run's stores left: SQLite files, Postgres schemas, Redis keys."""
        if self.backend == "sqlite":
            for file in self.workdir.glob(f"{self.run}_*"):
                file.unlink(missing_ok=True)
        if self.url is None:
            return
        if self.backend == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                names = conn.execute(
                    "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s",
                    (f"adp_{self.run}%",),
                ).fetchall()
                for (name,) in names:
                    conn.execute(
                        sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
                    )
            return
        with redis.Redis.from_url(self.url) as client:
            for key in client.scan_iter(match=f"{REDIS_PREFIX}:adp-{self.run}_*", count=1000):
                client.delete(key)
