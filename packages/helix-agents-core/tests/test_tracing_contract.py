"""The whole contract suite through ``traced()``: the wrapper changes no answer of the store."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from helix_agents.contract import Capabilities, SessionStoreContract, StoreFactory
from helix_agents.core import SessionStateStore
from helix_agents.core.tracing import traced
from helix_agents.store_memory import MemoryData, MemoryStateStore


class TestTracedMemoryContract(SessionStoreContract):
    """Every rule on a traced :class:`MemoryStateStore`, its spans recorded by an SDK provider."""

    # The traced wrapper is not itself a StoreBase: the seam's rules run on the memory store.
    capabilities = Capabilities(engine=False)

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        data = MemoryData()
        tracer_provider, meter_provider = TracerProvider(), MeterProvider()

        def factory(**options: Any) -> SessionStateStore:
            return traced(
                MemoryStateStore(data, **options),
                record_session_ids=True,
                tracer_provider=tracer_provider,
                meter_provider=meter_provider,
            )

        return factory
