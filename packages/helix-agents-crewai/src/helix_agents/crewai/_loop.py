"""An event loop of the persistence's own, in a daemon thread, for its sync methods (CRW-5)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from helix_agents.core import StateStoreError

__all__ = ["EventLoopError", "LoopThread"]

_T = TypeVar("_T")


class EventLoopError(StateStoreError, RuntimeError):
    """A sync call that cannot run: the persistence is closed, or the call came from the
    persistence's own loop (a store call that called back into it)."""

    code = "crewai_event_loop"


class LoopThread:
    """A running event loop in a thread of its own; :meth:`call` runs a coroutine there
    and waits for it, from any thread, whether or not that thread runs a loop."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """``coro``'s result, run on the loop; its exception as it raised it."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise EventLoopError(
                "HelixFlowPersistence was called from its own event loop; "
                "its sync methods are for the flow's threads"
            )
        if self._loop.is_closed() or not self._thread.is_alive():
            coro.close()
            raise EventLoopError("HelixFlowPersistence is closed")
        # The caller's thread (a running loop's, in kickoff_async) only waits: the store's
        # I/O runs on this loop, so nothing needs the caller's loop to progress.
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` ran."""
        return self._loop.is_closed()

    def stop(self) -> None:
        """Stop the loop and wait for its thread; later calls raise :class:`EventLoopError`."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
