"""Fixtures of the artifact and memory tests: ADK's own services, and ours on four backends.

``artifacts`` is ADK's ``InMemoryArtifactService`` or ``FileArtifactService`` (the
references the restated contract is checked against) or ``HelixArtifactService`` on
memory, SQLite, PostgreSQL or Redis; ``memory`` likewise with ADK's
``InMemoryMemoryService``. Tests of our own rules use adk_fixtures.py's ``stores`` and
``store``.
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
