"""Fixtures of the artifact and memory tests: ADK's own services, and ours on four backends.

``artifacts`` is ADK's ``InMemoryArtifactService`` or ``FileArtifactService`` (the
references the restated contract is checked against) or ``HelixArtifactService`` on
memory, SQLite, PostgreSQL or Redis; ``memory`` likewise with ADK's
``InMemoryMemoryService``. ``helix_store`` is the store under ours (tests of our rules).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from google.adk.artifacts import (
    BaseArtifactService,
    FileArtifactService,
    InMemoryArtifactService,
)
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from helix_backends import BACKENDS, Stores
from helix_fixtures import found_server

from helix_agents.adk import HelixArtifactService, HelixMemoryService
from helix_agents.core import SessionStateStore

ARTIFACT_SERVICES = ("adk-in-memory", "adk-file", *BACKENDS)
MEMORY_SERVICES = ("adk-in-memory", *BACKENDS)


def _stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores | None]:
    if request.param.startswith("adk-"):
        yield None
        return
    found = Stores(request.param, found_server(request, request.param), tmp_path)
    yield found
    found.purge()


@pytest.fixture(params=ARTIFACT_SERVICES)
def artifact_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores | None]:
    """Stores on one backend (``None`` for ADK's services); purged after the test."""
    yield from _stores(request, tmp_path)


@pytest.fixture(params=MEMORY_SERVICES)
def memory_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores | None]:
    """Stores on one backend (``None`` for ADK's service); purged after the test."""
    yield from _stores(request, tmp_path)


@pytest.fixture
async def artifacts(
    request: pytest.FixtureRequest, artifact_stores: Stores | None, tmp_path: Path
) -> AsyncIterator[BaseArtifactService]:
    """The artifact service under test."""
    if artifact_stores is None:
        name = request.node.callspec.params["artifact_stores"]
        yield (
            InMemoryArtifactService()
            if name == "adk-in-memory"
            else FileArtifactService(tmp_path / "artifacts")
        )
        return
    async with artifact_stores.store("main") as store:
        yield HelixArtifactService(store)


@pytest.fixture
async def memory(memory_stores: Stores | None) -> AsyncIterator[BaseMemoryService]:
    """The memory service under test."""
    if memory_stores is None:
        yield InMemoryMemoryService()
        return
    async with memory_stores.store("main") as store:
        yield HelixMemoryService(store)


@pytest.fixture(params=BACKENDS)
def helix_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """Stores on one backend, for the tests of our own rules; purged after the test."""
    found = Stores(request.param, found_server(request, request.param), tmp_path)
    yield found
    found.purge()


@pytest.fixture
async def helix_store(helix_stores: Stores) -> AsyncIterator[SessionStateStore]:
    """An open store on the test's backend."""
    async with helix_stores.store("main") as opened:
        yield opened


@pytest.fixture
async def helix_other_store(helix_stores: Stores) -> AsyncIterator[SessionStateStore]:
    """A second store on the same data: another process, in effect."""
    async with helix_stores.store("main") as opened:
        yield opened
