"""The contract suite on the memory store."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.store_memory import MemoryData, MemoryStateStore


class TestMemoryContract(SessionStoreContract):
    """Every rule on :class:`MemoryStateStore`; two instances share one :class:`MemoryData`."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        data = MemoryData()

        def factory(**options: Any) -> MemoryStateStore:
            return MemoryStateStore(data, **options)

        return factory
