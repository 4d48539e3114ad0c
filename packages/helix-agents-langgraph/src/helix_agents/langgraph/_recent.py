"""The channel values of the checkpoints a run put lately, for LGF-12's archive.

A node's writes name the checkpoint its task started from; LangGraph may store that
checkpoint in the background while the task runs, so it can still be on its way when the
writes arrive. The saver notes each checkpoint a :class:`HelixGraphRun` puts, and the
archive of the removed messages waits for it here.
"""

from __future__ import annotations

import asyncio
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
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def note(self, key: Key, values: Mapping[str, Any]) -> None:
        """Keep ``values`` as those of checkpoint ``key`` (the oldest beyond 64 go)."""
        changed = self._condition()
        async with changed:
            self._values[key] = values
            while len(self._values) > _KEPT:
                self._values.popitem(last=False)
            changed.notify_all()

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
        changed = self._condition()
        async with changed:
            try:
                await asyncio.wait_for(changed.wait_for(lambda: key in self._values), _WAIT_SECONDS)
            except TimeoutError:
                return {}
            return self._values[key]
