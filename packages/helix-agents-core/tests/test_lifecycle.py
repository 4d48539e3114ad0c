"""``ClosesOnExit``: leaving a store's ``async with`` closes it, and never hides the error."""

from __future__ import annotations

from typing import Any, Self

import pytest

from helix_agents.core import StoreUnavailableError
from helix_agents.core.lifecycle import ClosesOnExit
from helix_agents.core.tracing import traced
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio


class _Store(ClosesOnExit):
    def __init__(self) -> None:
        self.closes = 0

    async def __aenter__(self) -> Self:
        return self

    async def close(self) -> None:
        self.closes += 1


async def test_leaving_the_block_closes_the_store() -> None:
    async with _Store() as store:
        assert store.closes == 0
    assert store.closes == 1


async def test_an_error_in_the_block_closes_the_store_and_propagates() -> None:
    store = _Store()
    with pytest.raises(LookupError, match="inside"):
        async with store:
            raise LookupError("inside")
    assert store.closes == 1


async def test_leaving_a_traced_store_closes_the_wrapped_one() -> None:
    inner = MemoryStateStore()
    async with traced(inner) as store:
        await store.create_session("s")
    with pytest.raises(StoreUnavailableError):
        await inner.get_session("s")


class _Recording(MemoryStateStore):
    exits: list[type[BaseException] | None]

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.exits.append(exc_type)
        await super().__aexit__(exc_type, exc, tb)


async def test_a_traced_store_leaves_through_the_wrapped_stores_own_exit() -> None:
    """``traced`` hands the block's outcome to the wrapped store's own ``__aexit__``."""
    inner = _Recording()
    inner.exits = []
    with pytest.raises(LookupError):
        async with traced(inner, system="memory"):
            raise LookupError("inside")
    assert inner.exits == [LookupError]
    with pytest.raises(StoreUnavailableError):
        await inner.get_session("s")
