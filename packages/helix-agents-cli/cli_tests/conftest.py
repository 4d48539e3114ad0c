"""Fixtures of the CLI tests: the installed ``helix-store`` and a throwaway store per backend.

Servers are found as the store packages' tests find them: ``$HELIX_POSTGRES_URL`` /
``$HELIX_REDIS_URL``, else the local default port; otherwise the test is skipped
loudly (failed under ``HELIX_REQUIRE_BACKENDS=1``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql

from helix_agents.contract import backend_unavailable

from .seed import seed

HELIX_STORE = Path(sys.executable).with_name("helix-store")
PG_URLS = ("postgresql://127.0.0.1:5432/postgres", "postgresql://postgres@127.0.0.1:5432/postgres")


@dataclass(frozen=True)
class Result:
    """What one run of the command left behind."""

    code: int
    out: str
    err: str


Helix = Callable[..., Result]


def run_helix(*args: str, cwd: Path | None = None) -> Result:
    """Run the installed ``helix-store`` with ``args`` and collect its output."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [str(HELIX_STORE), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def helix() -> Helix:
    """``helix(*args)``: run the installed command in a subprocess."""
    assert HELIX_STORE.exists(), f"{HELIX_STORE} is not installed: run make install"
    return run_helix


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio."""
    return "asyncio"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file of the test's own."""
    return f"sqlite:///{tmp_path / 'store.db'}"


def _answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


@pytest.fixture(scope="session")
def pg_server() -> str:
    """A PostgreSQL server the tests may create schemas in."""
    env = os.environ.get("HELIX_POSTGRES_URL")
    for url in (env,) if env else PG_URLS:
        if _answers(url):
            return url
    backend_unavailable("no PostgreSQL server: set HELIX_POSTGRES_URL or run one on :5432")


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A store URL on a fresh schema (not migrated), dropped after the test."""
    schema = f"helix_cli_{uuid.uuid4().hex[:12]}"
    joiner = "&" if "?" in pg_server else "?"
    yield f"{pg_server}{joiner}schema={schema}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(scope="session")
def redis_server() -> str:
    """A Redis server the tests may write keys to."""
    url = os.environ.get("HELIX_REDIS_URL") or "redis://127.0.0.1:6379/0"
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=3) as client:
            client.ping()
    except redis.RedisError:
        backend_unavailable(f"no Redis server at {url}: set HELIX_REDIS_URL")
    return url


@pytest.fixture
def redis_url(redis_server: str) -> Iterator[str]:
    """A store URL under a key prefix no other test uses; its keys are deleted after."""
    prefix = f"helix-cli-{uuid.uuid4().hex[:12]}"
    joiner = "&" if "?" in redis_server else "?"
    yield f"{redis_server}{joiner}key_prefix={prefix}"
    with redis.Redis.from_url(redis_server) as client:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


@pytest.fixture(params=["sqlite_url", "pg_url", "redis_url"])
async def seeded(request: pytest.FixtureRequest) -> str:
    """A store seeded by :func:`seed`, on each backend whose data outlives a process."""
    url: str = request.getfixturevalue(request.param)
    await seed(url)
    return url
