"""Lazy tool disclosure for one run of an adapter: what the model is offered, what it may
activate (docs/context-strategies.md, dynamic).

The application names its tool sources; a source's tools are offered once the model
activated it. Activation appends core's ``tools`` context row, fenced by the run, so the
active set is replayed from the log after a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar, overload

from ..protocol import SessionStateStore
from .agent_tools import activate_tool_source
from .tools import ToolCatalog, ToolSource

__all__ = ["Disclosure"]

T = TypeVar("T")


class Disclosure(Generic[T]):
    """The tool sources of one run, tools of any framework type ``T`` named by ``name_of``."""

    def __init__(
        self,
        store: SessionStateStore,
        session_id: str,
        fence_run_id: str,
        sources: Mapping[str, Sequence[T]],
        name_of: Callable[[T], str],
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.fence_run_id = fence_run_id
        self.sources = {name: list(tools) for name, tools in sources.items()}
        self.catalog = ToolCatalog(
            [
                ToolSource(name, "code", tuple(name_of(t) for t in tools))
                for name, tools in self.sources.items()
            ]
        )
        self.active: list[str] = []

    async def replay(self) -> None:
        """The active sources, from the session's ``tools`` rows."""
        self.active = self.catalog.active_from_history(
            await self.store.get_messages(self.session_id)
        )

    def offered(self) -> list[T]:
        """The tools of the active sources."""
        return [tool for name in self.active for tool in self.sources.get(name, ())]

    def pending(self) -> bool:
        """Whether a source is still inactive (the activation tool is offered)."""
        return bool(self.catalog.inactive(self.active))

    @overload
    def instructions(self, given: str) -> str: ...
    @overload
    def instructions(self, given: None) -> str | None: ...
    def instructions(self, given: str | None) -> str | None:
        """``given`` with the catalog of the sources not yet active after it."""
        block = self.catalog.catalog_block(self.active)
        if not block:
            return given
        return f"{given}\n\n{block}" if given else block

    async def activate(self, source_name: str) -> str:
        """Record the activation of ``source_name`` (fenced by the run); the model's answer."""
        answer = await activate_tool_source(
            self.store, self.session_id, self.catalog, source_name, fence_run_id=self.fence_run_id
        )
        await self.replay()
        return answer
