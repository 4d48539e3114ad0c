"""Fixtures of the LangGraph saver's tests: each backend, opened on fresh data per test.

Postgres and Redis are found at ``$HELIX_POSTGRES_URL`` / ``$HELIX_REDIS_URL``,
else on their default local ports; otherwise the test is skipped loudly (failed
under ``HELIX_REQUIRE_BACKENDS=1``). Each test gets a schema or key namespace of
its own, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql

from helix_agents.contract import backend_unavailable
from helix_agents.core import SessionStateStore
from helix_agents.store_memory import MemoryData, MemoryStateStore
from helix_agents.store_postgres import PoolSettings, PostgresStateStore
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_sqlite import SQLiteStateStore

BACKENDS = ("memory", "sqlite", "postgres", "redis")
PG_URL = os.environ.get("HELIX_POSTGRES_URL") or "postgresql://127.0.0.1:5432/postgres"
REDIS_URL = os.environ.get("HELIX_REDIS_URL") or "redis://127.0.0.1:6379/0"
REDIS_PREFIX = "helix-test-lg"


@dataclass(frozen=True)
class Backend:
    """A backend and how to open stores on this test's data (each call: a new instance)."""

    name: str
    open: Callable[[], AbstractAsyncContextManager[SessionStateStore]]
    url: str  # for open_store, with the same data given ``namespace``
    namespace: str | None = None


def _postgres_answers() -> bool:
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def _redis_answers() -> bool:
    try:
        with redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio."""
    return "asyncio"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """One backend, on data of this test's own."""
    name: str = request.param
    if name == "memory":
        data = MemoryData()

        @asynccontextmanager
        async def memory() -> AsyncIterator[SessionStateStore]:
            async with MemoryStateStore(data) as store:
                yield store

        yield Backend(name, memory, f"memory://lg-{uuid.uuid4().hex[:12]}")
    elif name == "sqlite":
        path = tmp_path / "threads.db"

        @asynccontextmanager
        async def sqlite() -> AsyncIterator[SessionStateStore]:
            async with SQLiteStateStore(path) as store:
                yield store

        yield Backend(name, sqlite, f"sqlite:///{path}")
    elif name == "postgres":
        if not _postgres_answers():
            backend_unavailable(f"no PostgreSQL at {PG_URL} (set HELIX_POSTGRES_URL)")
        schema = f"helix_lg_{uuid.uuid4().hex[:12]}"

        @asynccontextmanager
        async def postgres() -> AsyncIterator[SessionStateStore]:
            small = PoolSettings(min_size=1, max_size=4, timeout=10.0)
            async with PostgresStateStore(
                PG_URL, schema=schema, auto_migrate=True, pool_settings=small
            ) as store:
                yield store

        yield Backend(name, postgres, f"{PG_URL}?auto_migrate=true", schema)
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    else:
        if not _redis_answers():
            backend_unavailable(f"no Redis at {REDIS_URL} (set HELIX_REDIS_URL)")
        namespace = f"t{uuid.uuid4().hex[:12]}"

        @asynccontextmanager
        async def redis_store() -> AsyncIterator[SessionStateStore]:
            async with RedisStateStore(
                REDIS_URL, key_prefix=REDIS_PREFIX, namespace=namespace
            ) as store:
                yield store

        yield Backend(name, redis_store, f"{REDIS_URL}?key_prefix={REDIS_PREFIX}", namespace)
        with redis.Redis.from_url(REDIS_URL) as client:
            keys = list(client.scan_iter(match=f"{REDIS_PREFIX}:{namespace}:*", count=1000))
            if keys:
                client.delete(*keys)
