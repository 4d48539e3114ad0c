"""Fixtures of the adapter's tests: ADK's in-memory service, and ours on four backends.

``service`` is ADK's ``InMemorySessionService`` (the reference the restated contract is
checked against) or ``HelixSessionService`` on memory, SQLite, PostgreSQL or Redis. Servers
come from the shared session fixtures (``helix_agents.contract.servers``, as in
contract_tests/support/helix_fixtures.py); a missing one skips, or fails under
``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from google.adk.sessions import BaseSessionService, InMemorySessionService
from helix_backends import BACKENDS, Stores
from helix_fixtures import found_server

from helix_agents.adk import HelixSessionService
from helix_agents.core import SessionStateStore

SERVICES = ("adk-in-memory", *BACKENDS)


@pytest.fixture(params=SERVICES)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores | None]:
    """Stores on one backend (``None`` for ADK's own service); purged after the test."""
    if request.param == "adk-in-memory":
        yield None
        return
    found = Stores(request.param, found_server(request, request.param), tmp_path)
    yield found
    found.purge()


@pytest.fixture
async def service(stores: Stores | None) -> AsyncIterator[BaseSessionService]:
    """The session service under test."""
    if stores is None:
        yield InMemorySessionService()
        return
    async with stores.store("main") as store:
        yield HelixSessionService(store)


@pytest.fixture
async def other_service(
    stores: Stores | None, service: BaseSessionService
) -> AsyncIterator[BaseSessionService]:
    """A second service on the same data (another process, in effect); ADK's: the same one."""
    if stores is None:
        yield service
        return
    async with stores.store("main") as store:
        yield HelixSessionService(store)


@pytest.fixture
async def store(stores: Stores | None) -> AsyncIterator[SessionStateStore]:
    """The store under ``service`` (the same data, another instance); ours only."""
    assert stores is not None, "a test that reads the store runs on our service only"
    async with stores.store("main") as opened:
        yield opened
