"""StoreBase's lifecycle on an engine that must be opened first (INP-5, INP-7): the memory
engine needs no opening, so this one counts its opens and closes."""

from __future__ import annotations

import pytest

from helix_agents.core import StoreUnavailableError
from helix_agents.core.backend import StoreBase
from helix_agents.store_memory import MemoryData
from helix_agents.store_memory._engine import MemoryEngine

pytestmark = pytest.mark.anyio


class _Counted(MemoryEngine):
    needs_open = True

    def __init__(self) -> None:
        super().__init__(MemoryData())
        self.opened = self.closed = self.migrated = 0

    async def open(self) -> None:
        self.opened += 1

    async def close(self) -> None:
        self.closed += 1

    async def migrate(self) -> None:
        self.migrated += 1


async def test_calls_before_open_are_refused_and_open_happens_once() -> None:
    engine = _Counted()
    store = StoreBase(engine)
    with pytest.raises(StoreUnavailableError, match="not open"):
        await store.create_session("s")
    await store.migrate()  # allowed before opening: it is how a schema is made
    assert (engine.opened, engine.migrated) == (0, 1)
    async with store:
        async with store:
            await store.create_session("s")
        assert engine.opened == 1
    assert engine.closed == 1
    with pytest.raises(StoreUnavailableError, match="closed"):
        await store.get_session("s")
    with pytest.raises(StoreUnavailableError, match="closed"):
        await store.migrate()
    with pytest.raises(StoreUnavailableError, match="closed"):
        async with store:
            pass
    await store.close()
    assert (engine.opened, engine.closed) == (1, 1)
