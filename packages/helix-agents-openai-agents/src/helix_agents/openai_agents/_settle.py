"""Writes that finish before a cancellation of their caller takes effect."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["settled"]

_T = TypeVar("_T")


async def settled(write: Coroutine[Any, Any, _T]) -> _T:
    """Run ``write`` to its end even if the caller is cancelled meanwhile, then re-raise that.

    A cancelled caller thus never leaves a write whose outcome it cannot know
    (and would retry): the SDK's runner counts on the same from its own sessions.
    """
    task = asyncio.ensure_future(write)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: the cancellation is what the caller asked for
        raise cancelled
    return task.result()
