"""Lazy tool disclosure under ``dynamic`` (OAI-9): a catalog, an activation tool, gated tools.

The application names its tool sources; each source's function tools are copied
with an ``is_enabled`` that holds while the source is active (the SDK asks it
before every model call). ``activate_tool_source`` appends core's ``tools``
context row, so the active set is replayed from the log after a restart.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import FunctionTool, RunContextWrapper, Tool

from helix_agents.core import SessionStateStore
from helix_agents.core.context import Disclosure as SourceDisclosure
from helix_agents.core.context.tools import ACTIVATE_TOOL

__all__ = ["Disclosure"]


class Disclosure(SourceDisclosure[Tool]):
    """The tool sources of one run: what the model sees, and what it may activate."""

    def __init__(
        self,
        store: SessionStateStore,
        session_id: str,
        fence_run_id: str,
        sources: Mapping[str, Sequence[Tool]],
    ) -> None:
        super().__init__(store, session_id, fence_run_id, sources, lambda tool: tool.name)

    def tools(self) -> list[Tool]:
        """Every source's tools, each enabled only while its source is active, and the
        activation tool."""
        gated: list[Tool] = []
        for name, tools in self.sources.items():
            for tool in tools:
                if isinstance(tool, FunctionTool):
                    tool = dataclasses.replace(tool, is_enabled=self._enabled(name))
                gated.append(tool)
        return [*gated, self._activation_tool()]

    def _enabled(self, source: str) -> Any:
        def enabled(_: RunContextWrapper[Any], __: Any) -> bool:
            return source in self.active

        return enabled

    def _activation_tool(self) -> FunctionTool:
        async def invoke(_: RunContextWrapper[Any], arguments: str) -> str:
            return await self.activate(json.loads(arguments or "{}").get("source_name"))

        return FunctionTool(
            name=ACTIVATE_TOOL,
            description="Enable the tools of one tool source listed under Available Tool "
            "Sources, so they can be called from the next model call on.",
            params_json_schema={
                "type": "object",
                "properties": {"source_name": {"type": "string", "enum": list(self.sources)}},
                "required": ["source_name"],
                "additionalProperties": False,
            },
            on_invoke_tool=invoke,
            is_enabled=lambda _ctx, _agent: self.pending(),
        )
