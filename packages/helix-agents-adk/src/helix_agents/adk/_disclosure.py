"""Lazy tool disclosure under ``dynamic`` (ADKF-9): a catalog, an activation tool, gated tools.

The application names its tool sources. Before each model call the tools of a source
not yet active are taken out of the request (ADK runs only the tools a request holds)
and core's catalog of those sources ends the instructions. ``activate_tool_source``
appends core's ``tools`` context row, fenced by the run, so a later run replays the
active sources from the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from helix_agents.core import MessageCommit, SessionStateStore
from helix_agents.core.context import (
    ACTIVATE_TOOL,
    ToolCatalog,
    ToolSource,
    UnknownToolSourceError,
    error_text,
)

from ._context import context_event
from ._runs import Runs
from .service import _marker, _set_marker

__all__ = ["Disclosure", "ToolLike", "hide"]

ToolLike = BaseTool | Callable[..., Any]
"""A tool as ADK's agents take it: a ``BaseTool`` or a plain function."""


class Disclosure:
    """The tool sources of a plugin: what each request offers, and what the model may activate."""

    def __init__(
        self, store: SessionStateStore, runs: Runs, sources: Mapping[str, Sequence[ToolLike]]
    ) -> None:
        self.store = store
        self.runs = runs
        self.sources = {
            name: [t if isinstance(t, BaseTool) else FunctionTool(t) for t in tools]
            for name, tools in sources.items()
        }
        self.catalog = ToolCatalog(
            [
                ToolSource(name, "code", tuple(t.name for t in tools))
                for name, tools in self.sources.items()
            ]
        )

    async def replay(self, sid: str) -> list[str]:
        """The active sources of session ``sid``, from its ``tools`` rows."""
        return self.catalog.active_from_history(await self.store.get_messages(sid))

    def tools(self) -> list[BaseTool]:
        """Every source's tools and the activation tool."""
        return [*(t for tools in self.sources.values() for t in tools), self._activation_tool()]

    def gate(self, request: LlmRequest, active: Sequence[str] | None) -> None:
        """Take the inactive sources' tools out of ``request`` and add the catalog, or with
        ``active=None`` (disclosure off) only the activation tool."""
        if active is None:
            hide(request, {ACTIVATE_TOOL})
            return
        hidden = {t for s in self.catalog.inactive(active) for t in s.tools}
        hide(request, hidden or {ACTIVATE_TOOL})
        block = self.catalog.catalog_block(active)
        if block:
            request.append_instructions([block])

    def _activation_tool(self) -> FunctionTool:
        async def activate_tool_source(source_name: str, tool_context: ToolContext) -> str:
            """Enable the tools of one tool source listed under Available Tool Sources, so
            they can be called from the next model call on.

            Args:
                source_name: The name of the source, as the catalog lists it.
            """
            session = tool_context.session
            run = self.runs.of(session)
            expected = _marker(session)
            if run is None or expected is None:
                return f"[error: no run of the store holds session {session.id!r}]"
            try:
                item = self.catalog.activate(source_name, run.active_sources)
            except UnknownToolSourceError as err:
                return error_text(err)
            if item is None:
                return f"Tool source {source_name!r} is already active."
            row = item.to_message()
            commit = MessageCommit(
                messages=(row,), fence_run_id=run.run_id, expect_message_count=expected
            )
            result = await self.store.append_messages(run.sid, commit)
            session.events.append(
                context_event(row, result.first_index, tool_context.invocation_id)
            )
            _set_marker(session, result.message_count)
            run.active_sources.append(source_name)
            return item.content

        return FunctionTool(activate_tool_source)


def hide(request: LlmRequest, names: set[str]) -> None:
    """Take the tools ``names`` out of ``request``: the model is not offered them and ADK
    does not run them."""
    for name in names:
        request.tools_dict.pop(name, None)
    for tool in request.config.tools or ():
        if isinstance(tool, types.Tool) and tool.function_declarations:
            kept = [d for d in tool.function_declarations if d.name not in names]
            tool.function_declarations = kept
