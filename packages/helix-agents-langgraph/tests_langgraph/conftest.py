"""Fixtures of the LangGraph saver's tests: each backend, opened on fresh data per test.

Postgres and Redis come from the finder every package shares
(``helix_agents.contract.servers``: env URL, local default port, local binaries, a
Docker container; CONTRIBUTING.md); otherwise the test is skipped loudly (failed
under ``HELIX_REQUIRE_BACKENDS=1``). Each test gets a schema or key namespace of
its own, dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from helix_fixtures import postgres_schema_url
from psycopg import sql

from helix_agents.contract.servers import RedisServers
from helix_agents.core import SessionStateStore
from helix_agents.store_memory import MemoryData, MemoryStateStore
from helix_agents.store_postgres import PoolSettings, PostgresStateStore
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_sqlite import SQLiteStateStore

__all__ = ["BACKENDS", "Backend", "postgres_schema_url"]

BACKENDS = ("memory", "sqlite", "postgres", "redis")
REDIS_PREFIX = "helix-test-lg"


@dataclass(frozen=True)
class Backend:
    """A backend and how to open stores on this test's data (each call: a new instance)."""

    name: str
    open: Callable[[], AbstractAsyncContextManager[SessionStateStore]]
    url: str  # for open_store, with the same data given ``namespace``
    namespace: str | None = None


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """One backend, on data of this test's own."""
    name: str = request.param
    if name == "memory":
        data = MemoryData()
        yield Backend(name, lambda: MemoryStateStore(data), f"memory://lg-{uuid.uuid4().hex[:12]}")
    elif name == "sqlite":
        path = tmp_path / "threads.db"
        yield Backend(name, lambda: SQLiteStateStore(path), f"sqlite:///{path}")
    elif name == "postgres":
        pg_url: str = request.getfixturevalue("helix_postgres_url")
        schema = f"helix_lg_{uuid.uuid4().hex[:12]}"
        small = PoolSettings(min_size=1, max_size=4, timeout=10.0)

        def postgres() -> PostgresStateStore:
            return PostgresStateStore(pg_url, schema=schema, auto_migrate=True, pool_settings=small)

        joiner = "&" if "?" in pg_url else "?"
        yield Backend(name, postgres, f"{pg_url}{joiner}auto_migrate=true", schema)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    else:
        redis_url: str = request.getfixturevalue("helix_redis_url")
        namespace = f"t{uuid.uuid4().hex[:12]}"

        def redis_store() -> RedisStateStore:
            return RedisStateStore(redis_url, key_prefix=REDIS_PREFIX, namespace=namespace)

        joiner = "&" if "?" in redis_url else "?"
        yield Backend(name, redis_store, f"{redis_url}{joiner}key_prefix={REDIS_PREFIX}", namespace)
        with redis.Redis.from_url(redis_url) as client:
            keys = list(client.scan_iter(match=f"{REDIS_PREFIX}:{namespace}:*", count=1000))
            if keys:
                client.delete(*keys)


@pytest.fixture
def frozen_redis(redis_servers: RedisServers) -> Iterator[tuple[str, Callable[[], None]]]:
    """A Redis server of this test's own, and a function that freezes it (SIGSTOP)."""
    port = redis_servers.start()
    yield f"redis://127.0.0.1:{port}/0", lambda: redis_servers.freeze(port)
    redis_servers.thaw(port)
