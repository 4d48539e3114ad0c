"""The channel values of the checkpoints a run put lately, for LGF-12's archive.

A node's writes name the checkpoint its task started from; LangGraph may store that
checkpoint in the background while the task runs, so it can still be on its way when the
writes arrive. The saver notes each checkpoint a :class:`HelixGraphRun` puts, and the
archive of the removed messages waits for it here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

__all__ = ["RecentValues"]

_KEPT = 64
_WAIT_SECONDS = 30.0

Key = tuple[str, str, str]  # thread, namespace, checkpoint id


class RecentValues:
    """The channel values of the last checkpoints put, by (thread, namespace, id)."""

    def __init__(self) -> None:
        self._values: OrderedDict[Key, Mapping[str, Any]] = OrderedDict()
        self._waiting: dict[Key, asyncio.Event] = {}

    def note(self, key: Key, values: Mapping[str, Any]) -> None:
        """Keep ``values`` as those of checkpoint ``key`` (the oldest beyond 64 go).
        Synchronous: a put gains no await, so its timing against other writers is as it was."""
        self._values[key] = values
        while len(self._values) > _KEPT:
            self._values.popitem(last=False)
        if (waiting := self._waiting.pop(key, None)) is not None:
            waiting.set()

    async def values(
        self, key: Key, stored: Callable[[], Awaitable[Mapping[str, Any] | None]]
    ) -> Mapping[str, Any]:
        """The values of checkpoint ``key``: noted, else ``stored()``, else the ones a put
        still on its way notes (at most 30 s; then none)."""
        if key in self._values:
            return self._values[key]
        found = await stored()
        if found is not None:
            return found
        if key in self._values:  # noted while the read ran
            return self._values[key]
        waiting = self._waiting.setdefault(key, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiting.wait(), _WAIT_SECONDS)
        self._waiting.pop(key, None)
        return self._values.get(key, {})
