"""Fixtures of the adapter's tests (through conftest.py): each test runs on the four backends.

Servers come from the shared session fixtures (``helix_agents.contract.servers``,
CONTRIBUTING.md); a missing one skips, or fails under ``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from helix_backends import BACKENDS, Stores

from helix_agents.core import SessionStateStore

_FIXTURES = {"postgres": "helix_postgres_url", "redis": "helix_redis_url"}


def found_server(request: pytest.FixtureRequest, backend: str) -> str | None:
    """The session's server of ``backend`` (``None`` for memory and SQLite), or a skip."""
    if backend not in _FIXTURES:
        return None
    url: str = request.getfixturevalue(_FIXTURES[backend])
    return url


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio."""
    return "asyncio"


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
