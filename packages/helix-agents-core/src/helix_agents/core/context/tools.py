"""Lazy tool disclosure: a catalog of tool sources, activated on request, replayed from history."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..messages import ContextItem, ContextMessage, JsonObject, Message
from .errors import UnknownToolSourceError

__all__ = ["ACTIVATE_TOOL", "SourceKind", "ToolCatalog", "ToolSource"]

SourceKind: TypeAlias = Literal["builtin", "mcp", "code", "agent", "openapi"]
"""Where a tool source's tools come from."""
ACTIVATE_TOOL = "activate_tool_source"
"""The name of the agent tool that activates a tool source."""
PREVIEW_NAMES = 5


@dataclass(frozen=True, slots=True)
class ToolSource:
    """A provider of tools: its name, kind and the names of its tools."""

    name: str
    kind: SourceKind
    tools: tuple[str, ...]

    @property
    def eager(self) -> bool:
        """Built-ins are small and always relevant: they are never withheld."""
        return self.kind == "builtin"


class ToolCatalog:
    """The tool sources of an agent under ``dynamic``: what is shown, what can be activated."""

    def __init__(self, sources: Sequence[ToolSource]) -> None:
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise ValueError(f"tool source names must be unique: {names}")
        self.sources = {s.name: s for s in sources}

    def inactive(self, active: Iterable[str]) -> list[ToolSource]:
        """The sources that are neither eager nor active, in catalog order."""
        on = set(active)
        return [s for s in self.sources.values() if not s.eager and s.name not in on]

    def visible_tools(self, active: Iterable[str]) -> list[str]:
        """The tool names the model is shown: the eager sources' and the active sources'."""
        on = set(active)
        return [t for s in self.sources.values() if s.eager or s.name in on for t in s.tools]

    def catalog_block(self, active: Iterable[str]) -> str:
        """The prompt block listing each source not yet active, with a preview of its tools."""
        waiting = self.inactive(active)
        if not waiting:
            return ""
        lines = [
            "## Available Tool Sources",
            f'Use {ACTIVATE_TOOL}("name") to enable tools before using them.',
        ]
        for s in waiting:
            preview = ", ".join(s.tools[:PREVIEW_NAMES])
            more = ", ..." if len(s.tools) > PREVIEW_NAMES else ""
            lines.append(f"- **{s.name}** [{s.kind}] ({len(s.tools)} tools): {preview}{more}")
        return "\n".join(lines)

    def activation_tool(self, active: Iterable[str]) -> JsonObject | None:
        """The activation tool whose enum is exactly the inactive sources; ``None`` when none is."""
        waiting = [s.name for s in self.inactive(active)]
        if not waiting:
            return None
        return {
            "name": ACTIVATE_TOOL,
            "description": "Enable the tools of one tool source listed under Available Tool "
            "Sources, so they can be called from the next turn on.",
            "parameters": {
                "type": "object",
                "properties": {"source_name": {"type": "string", "enum": list(waiting)}},
                "required": ["source_name"],
                "additionalProperties": False,
            },
        }

    def activate(self, name: object, active: Iterable[str]) -> ContextItem | None:
        """The ``tools`` context item that enables source ``name``; ``None`` if already active.

        An unknown name is an :class:`UnknownToolSourceError` whose message —
        meant for the model — lists the sources that can be activated.
        """
        source = self.sources.get(name) if isinstance(name, str) else None
        if source is None:
            choices = ", ".join(s.name for s in self.inactive(active)) or "none"
            raise UnknownToolSourceError(
                f"there is no tool source {name!r}; sources that can be activated: {choices}"
            )
        if source.eager or source.name in set(active):
            return None
        return ContextItem(
            kind="tools",
            content=f"Tool source {source.name!r} is active: {', '.join(source.tools)}",
            enable=list(source.tools),
            source=source.name,
        )

    def active_from_history(self, rows: Iterable[Message]) -> list[str]:
        """The sources the ``tools`` rows of ``rows`` activated, in order (replay after restart).

        A row's ``source`` names the source; a ``disable`` listing every tool of
        an active source deactivates it.
        """
        active: dict[str, None] = {}
        for row in rows:
            if not isinstance(row, ContextMessage) or row.kind != "tools":
                continue
            source = self.sources.get(row.source or "")
            if source is None:
                continue
            if row.enable and set(source.tools) <= set(row.enable):
                active[source.name] = None
            if row.disable and set(source.tools) <= set(row.disable):
                active.pop(source.name, None)
        return list(active)
