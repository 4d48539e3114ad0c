"""Lazy tool disclosure under ``dynamic`` (LGF-10): a catalog, an activation tool, gated tools.

The application names its tool sources; a source's tools are offered to the model once
the model activated it. ``activate_tool_source`` appends core's ``tools`` context row, so
the active set is replayed from the log after a restart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.tools import BaseTool

from helix_agents.core import SessionStateStore
from helix_agents.core.context import ToolCatalog, ToolSource, activate_tool_source

__all__ = ["Disclosure"]


class Disclosure:
    """The tool sources of one run: what the model sees, and what it may activate."""

    def __init__(
        self,
        store: SessionStateStore,
        session_id: str,
        fence_run_id: str,
        sources: Mapping[str, Sequence[BaseTool]],
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.fence_run_id = fence_run_id
        self.sources = {name: list(tools) for name, tools in sources.items()}
        self.catalog = ToolCatalog(
            [
                ToolSource(name, "code", tuple(t.name for t in tools))
                for name, tools in sources.items()
            ]
        )
        self.active: list[str] = []

    async def replay(self) -> None:
        """The active sources, from the session's ``tools`` rows."""
        self.active = self.catalog.active_from_history(
            await self.store.get_messages(self.session_id)
        )

    def offered(self) -> list[BaseTool]:
        """The tools of the active sources."""
        return [tool for name in self.active for tool in self.sources.get(name, ())]

    def pending(self) -> bool:
        """Whether a source is still inactive (the activation tool is offered)."""
        return bool(self.catalog.inactive(self.active))

    def instructions(self, given: str) -> str:
        """``given`` with the catalog of the sources not yet active after it."""
        block = self.catalog.catalog_block(self.active)
        if not block:
            return given
        return f"{given}\n\n{block}" if given else block

    async def activate(self, source_name: str) -> str:
        """Record the activation of ``source_name`` (fenced by the run); the model's answer."""
        answer = await activate_tool_source(
            self.store,
            self.session_id,
            self.catalog,
            source_name,
            fence_run_id=self.fence_run_id,
        )
        await self.replay()
        return answer
