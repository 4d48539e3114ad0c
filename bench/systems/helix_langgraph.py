"""``HelixCheckpointSaver`` on one of our stores, driven by the same graph as LangGraph's savers."""

from __future__ import annotations

from helix_agents.langgraph import HelixCheckpointSaver

from .langgraph import GraphSubject
from .ours import HelixSubject

__all__ = ["HelixSaverSubject"]


class HelixSaverSubject(GraphSubject):
    """The graph workload of :mod:`bench.systems.langgraph`, checkpointed in one of our stores."""

    family = "helix"

    def __init__(self, store: HelixSubject) -> None:
        super().__init__()
        self.inner = store
        self.name = f"LangGraph on {store.name}"
        self.server = store.server
        self.place = store.place

    async def open(self) -> None:
        await self.inner.open()
        self.saver = HelixCheckpointSaver(self.inner.store)
        self._compile(self.saver)

    async def close(self) -> None:
        self.graph = None
        await self.inner.close()
