"""Fixtures of the CLI tests: the installed ``helix-store`` and a throwaway store per backend.

Servers come from the finder every package shares (``helix_agents.contract.servers``:
env URL, local default port, local binaries, a Docker container; CONTRIBUTING.md);
otherwise the test is skipped loudly (failed under ``HELIX_REQUIRE_BACKENDS=1``).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql
from warm_python import run_entry_point

from .seed import seed

HELIX_STORE = Path(sys.executable).with_name("helix-store")


@dataclass(frozen=True)
class Result:
    """What one run of the command left behind."""

    code: int
    out: str
    err: str


Helix = Callable[..., Result]


def run_helix(*args: str, cwd: Path | None = None, stdin: str = "") -> Result:
    """Run the installed ``helix-store`` with ``args`` and ``stdin`` as its input (a
    prompt reads its end: no answer), and collect its output. It runs as the console
    script would, in a fork of a warmed interpreter (warm_python.py); tests of the process
    itself (signals, progress on a terminal) start it with ``subprocess``."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    done = run_entry_point(
        HELIX_STORE, "helix_agents.cli:main", args, cwd=cwd, env=env, input=stdin
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def helix() -> Helix:
    """``helix(*args)``: run the installed command (see :func:`run_helix`)."""
    assert HELIX_STORE.exists(), f"{HELIX_STORE} is not installed: run make install"
    return run_helix


def with_option(url: str, name: str, value: str) -> str:
    """``url`` with the query option ``name=value`` added."""
    return f"{url}{'&' if '?' in url else '?'}{name}={value}"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file of the test's own."""
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture(scope="session")
def pg_server(helix_postgres_url: str) -> str:
    """A PostgreSQL server the tests may create schemas in."""
    return helix_postgres_url


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A store URL on a fresh schema (not migrated), dropped after the test."""
    schema = f"helix_cli_{uuid.uuid4().hex[:12]}"
    yield with_option(pg_server, "schema", schema)
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def redis_url(helix_redis_url: str) -> Iterator[str]:
    """A store URL on the shared Redis, under a key prefix no other test uses; its keys are
    deleted after."""
    prefix = f"helix-cli-{uuid.uuid4().hex[:12]}"
    yield with_option(helix_redis_url, "key_prefix", prefix)
    with redis.Redis.from_url(helix_redis_url) as client:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


@pytest.fixture(params=["sqlite_url", "pg_url", "redis_url"])
async def seeded(request: pytest.FixtureRequest) -> str:
    """A store seeded by :func:`seed`, on each backend whose data outlives a process."""
    url: str = request.getfixturevalue(request.param)
    await seed(url)
    return url


Fresh = Callable[[str], str]


@pytest.fixture
async def fresh(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Fresh]:
    """``fresh(backend)``: the URL of an empty store on ``backend``, dropped after the test."""
    schemas: list[str] = []
    prefixes: list[str] = []

    def make(backend: str) -> str:
        name = uuid.uuid4().hex[:12]
        if backend == "memory":
            return f"memory://matrix-{name}"
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / f'{name}.db'}"
        if backend == "postgres":
            schemas.append(f"helix_mx_{name}")
            server: str = request.getfixturevalue("pg_server")
            return with_option(server, "schema", schemas[-1])
        prefixes.append(f"helix-mx-{name}")
        return with_option(request.getfixturevalue("helix_redis_url"), "key_prefix", prefixes[-1])

    yield make
    if schemas:
        with psycopg.connect(request.getfixturevalue("pg_server"), autocommit=True) as conn:
            for schema in schemas:
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )
    if prefixes:
        with redis.Redis.from_url(request.getfixturevalue("helix_redis_url")) as client:
            for prefix in prefixes:
                for key in client.scan_iter(match=f"{prefix}*"):
                    client.delete(key)
