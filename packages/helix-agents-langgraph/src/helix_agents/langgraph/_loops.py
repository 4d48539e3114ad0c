"""Sync calls into the store's event loop from another thread, or a typed refusal (ADP-7)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import EventLoopError

__all__ = ["run_on"]

_T = TypeVar("_T")
_POLL = 0.25  # seconds between checks that the loop still runs


def run_on(loop: asyncio.AbstractEventLoop | None, call: Coroutine[Any, Any, _T], owner: str) -> _T:
    """Run ``call`` on ``loop`` and wait for it; ``EventLoopError`` at once when called on
    that loop's thread or when it is not running, or as soon as it stops during the wait."""
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or running is loop:
        call.close()
        raise EventLoopError(
            f"{owner}'s sync methods run the store's calls on its event loop from another "
            "thread; on that loop, use the async API (the a* methods, ainvoke, astream)"
        )
    if not loop.is_running():
        call.close()
        raise _stopped(owner)
    future = asyncio.run_coroutine_threadsafe(call, loop)
    while not concurrent.futures.wait([future], timeout=_POLL).done:
        if not loop.is_running():
            future.cancel()
            raise _stopped(owner)
    return future.result()


def _stopped(owner: str) -> EventLoopError:
    return EventLoopError(
        f"the event loop {owner}'s store runs on is not running (stopped or closed): a sync "
        "call cannot reach the store; open the store on a running loop"
    )
