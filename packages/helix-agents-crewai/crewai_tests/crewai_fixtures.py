"""``persistence`` and ``other``: two ``HelixFlowPersistence`` on the same data of the
test's backend (two processes, in effect), each on its own loop thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helix_backends import Stores

from helix_agents.crewai import HelixFlowPersistence


@pytest.fixture
def persistence(stores: Stores) -> Iterator[HelixFlowPersistence]:
    """A persistence on the test's backend."""
    with HelixFlowPersistence(stores.store("main")) as opened:
        yield opened


@pytest.fixture
def other(stores: Stores) -> Iterator[HelixFlowPersistence]:
    """A second persistence on the data of ``persistence``."""
    with HelixFlowPersistence(stores.store("main")) as opened:
        yield opened
