"""LangGraph's long-term memory (``BaseStore``) over any helix-agents session store.

``graph.compile(store=HelixMemoryStore(store))`` keeps items in one session of the
store as versioned records (docs/integrations/langgraph.md, "Long-term memory", LGM-1..9).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.inputs import check_id

from ._loops import run_on
from ._memory_checks import check_ops
from ._memory_layout import SEP
from ._memory_shelf import Shelf
from .memory_errors import SemanticSearchUnsupportedError

__all__ = ["MEMORY_SESSION", "HelixMemoryStore"]

MEMORY_SESSION = f"langgraph{SEP}memory"
"""The session that holds a memory store's items unless ``session_id`` names another."""


class HelixMemoryStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items live in ``store``: JSON values, TTL, plain-text
    search; no semantic search (LGM-7)."""

    supports_ttl = True

    def __init__(
        self,
        store: SessionStateStore,
        *,
        session_id: str = MEMORY_SESSION,
        ttl: TTLConfig | None = None,
        index: IndexConfig | None = None,
    ) -> None:
        if index is not None:
            raise SemanticSearchUnsupportedError(
                "HelixMemoryStore has no vector search: drop index= (search's query matches "
                "the words of the values instead)"
            )
        self.store = store
        self.session_id = check_id(session_id, "session_id")
        self.ttl_config = ttl
        self._shelf = Shelf(store, self.session_id)
        self._sweeper: asyncio.Task[None] | None = None
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, after checking every one (LGM-6)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        checked = check_ops(ops, self.session_id)
        shelf = self._shelf
        results: list[Result] = []
        for op in checked:
            if isinstance(op, PutOp):
                await shelf.put(op)
                results.append(None)
            elif not await shelf.readable():
                results.append(None if isinstance(op, GetOp) else [])
            elif isinstance(op, GetOp):
                found = await shelf.get(op.namespace, op.key, op.refresh_ttl)
                results.append(None if found is None else found.item())
            elif isinstance(op, SearchOp):
                results.append([item.search_item() for item in await shelf.search(op)])
            else:
                assert isinstance(op, ListNamespacesOp)
                results.append(await shelf.namespaces(op))
        return results

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Sync :meth:`abatch`, from a thread other than the store's loop (LGM-8)."""
        return run_on(self._loop, self.abatch(list(ops)), "HelixMemoryStore")

    # TTL (LGM-5)

    async def asweep_ttl(self) -> int:
        """Delete every expired item; how many."""
        return await self._shelf.sweep()

    def sweep_ttl(self) -> int:
        """Sync :meth:`asweep_ttl`."""
        return run_on(self._loop, self.asweep_ttl(), "HelixMemoryStore")

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep every ``sweep_interval_minutes`` (default: the TTL config's) until stopped."""
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes")
        if type(minutes) not in (int, float) or not minutes or minutes <= 0:
            raise ValidationError(
                f"memory {self.session_id!r}: sweep interval {minutes!r} is not a positive "
                "number of minutes (pass one, or TTLConfig(sweep_interval_minutes=...))",
                session_id=self.session_id,
            )
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep_every(float(minutes) * 60.0))
        return self._sweeper

    async def stop_ttl_sweeper(self) -> None:
        """Stop the sweeper task, if one runs."""
        task, self._sweeper = self._sweeper, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _sweep_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            await self.asweep_ttl()
