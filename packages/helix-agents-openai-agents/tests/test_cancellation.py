"""A cancelled add_items, pop_item or clear_session finishes its write before it raises."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest
from agents import TResponseInputItem

from helix_agents.core import SessionStateStore
from helix_agents.openai_agents import HelixSession

pytestmark = pytest.mark.anyio

ITEM: TResponseInputItem = {"role": "user", "content": "once"}
WRITES = {"add": "append_messages", "pop": "pop_messages", "clear": "clear_session"}


class AckPaused:
    """The store, except that one write method holds its answer until ``release`` is set."""

    def __init__(self, store: SessionStateStore, method: str) -> None:
        self._store = store
        self._method = method
        self.landed = asyncio.Event()
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(self._store, name)
        if name != self._method:
            return real

        async def paused(*args: Any, **kwargs: Any) -> Any:
            result = await real(*args, **kwargs)
            self.landed.set()
            await self.release.wait()
            return result

        return paused


@pytest.mark.parametrize("operation", list(WRITES))
async def test_cancellation_waits_for_the_write(store: SessionStateStore, operation: str) -> None:
    if operation != "add":
        await HelixSession("s", store).add_items([ITEM])
    paused = AckPaused(store, WRITES[operation])
    session = HelixSession("s", cast(SessionStateStore, paused))
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "add": lambda: session.add_items([ITEM]),
        "pop": session.pop_item,
        "clear": session.clear_session,
    }
    call = calls[operation]
    task = asyncio.ensure_future(call())
    await paused.landed.wait()
    task.cancel()
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0)
    assert not task.done()  # still waiting for the store's answer, cancelled or not
    paused.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    left = await HelixSession("s", store).get_items()
    assert left == ([ITEM] if operation == "add" else [])
