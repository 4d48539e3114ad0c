"""Fixtures of the adapter's tests (through conftest.py): each test runs on the four backends.

Servers are found as in sdk_suite/helix_backends.py (env URL, then the local
default port); a missing one skips, or fails under ``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from helix_backends import BACKENDS, Stores, server_url

from helix_agents.contract import backend_unavailable
from helix_agents.core import SessionStateStore


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio."""
    return "asyncio"


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """Stores on one backend; what they leave on a server goes after the test."""
    url, why = server_url(request.param)
    if why:
        backend_unavailable(why)
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
