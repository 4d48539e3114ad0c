"""Fixtures of the adapters' tests (through their conftest.py): each test runs on four backends.

Servers come from the shared session fixtures (``helix_agents.contract.servers``,
CONTRIBUTING.md); a missing one skips, or fails under ``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from helix_backends import BACKENDS, Stores
from psycopg import sql
from sdist_suite import Suite

from helix_agents.contract.servers import POSTGRES_ENV, REDIS_ENV
from helix_agents.core import SessionStateStore

_FIXTURES = {"postgres": "helix_postgres_url", "redis": "helix_redis_url"}


def found_server(request: pytest.FixtureRequest, backend: str) -> str | None:
    """The session's server of ``backend`` (``None`` for memory and SQLite), or a skip."""
    if backend not in _FIXTURES:
        return None
    url: str = request.getfixturevalue(_FIXTURES[backend])
    return url


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """Stores on one backend; what they leave on a server goes after the test."""
    url = found_server(request, request.param)
    found = Stores(request.param, url, tmp_path)
    yield found
    found.purge()


@pytest.fixture
async def store(stores: Stores) -> AsyncIterator[SessionStateStore]:
    """An open store on the test's backend."""
    async with stores.store("main") as opened:
        yield opened


@pytest.fixture
async def other_store(stores: Stores) -> AsyncIterator[SessionStateStore]:
    """A second store on the same data as ``store``: another process, in effect."""
    async with stores.store("main") as opened:
        yield opened


@pytest.fixture
def postgres_schema_url(helix_postgres_url: str) -> Iterator[str]:
    """A store URL on the test server, in a schema of the test's own (created by the
    store's ``auto_migrate``), dropped afterwards: an example's run on PostgreSQL."""
    schema = f"example_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in helix_postgres_url else "?"
    yield f"{helix_postgres_url}{sep}namespace={schema}&auto_migrate=true"
    with psycopg.connect(helix_postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def run_suite(
    suite: Suite,
    what: str,
    backend: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[dict[str, int], str]:
    """A framework's own tests on ``backend`` (``sdist_suite``): the counts and their line.

    The line is printed; a failed test or a failed run fails the caller.
    """
    url = found_server(request, backend)
    if url is not None:  # the child run finds the session's server first, by its env URL
        monkeypatch.setenv(POSTGRES_ENV if backend == "postgres" else REDIS_ENV, url)
    counts = suite.run(backend, "-p", "no:randomly")
    summary = suite.describe(what, backend, counts)
    with capsys.disabled():
        print(f"\n{summary}")
    assert counts["exit"] == 0, summary
    assert counts.get("failed", 0) == 0, summary
    return counts, summary
