"""Lazy tool disclosure: catalog, activation tool, errors, replay from history."""

from __future__ import annotations

import pytest

from helix_agents.core import ChatMessage, Message
from helix_agents.core.context import ToolCatalog, ToolSource, UnknownToolSourceError

CATALOG = ToolCatalog(
    [
        ToolSource("files", "builtin", ("read_file", "write_file")),
        ToolSource("github", "mcp", ("list_repos", "create_issue", "search_code", "a", "b", "c")),
        ToolSource("math", "code", ("calculate", "convert_units")),
    ]
)


def test_CS_17_catalog_lists_inactive_sources_with_a_preview() -> None:
    block = CATALOG.catalog_block([])
    assert "- **github** [mcp] (6 tools): list_repos, create_issue, search_code, a, b, ..." in block
    assert "- **math** [code] (2 tools): calculate, convert_units" in block
    assert "files" not in block
    assert CATALOG.visible_tools([]) == ["read_file", "write_file"]


def test_CS_17_activation_tool_enum_is_exactly_the_inactive_sources() -> None:
    tool = CATALOG.activation_tool([])
    assert tool is not None
    assert tool["parameters"]["properties"]["source_name"]["enum"] == ["github", "math"]  # type: ignore[call-overload,index]
    tool = CATALOG.activation_tool(["github"])
    assert tool is not None
    assert tool["parameters"]["properties"]["source_name"]["enum"] == ["math"]  # type: ignore[call-overload,index]
    assert CATALOG.activation_tool(["github", "math"]) is None


def test_CS_17_unknown_source_is_an_error_naming_the_choices() -> None:
    with pytest.raises(UnknownToolSourceError) as caught:
        CATALOG.activate("gitlab", [])
    assert caught.value.code == "context_unknown_tool_source"
    assert "'gitlab'" in str(caught.value) and "github, math" in str(caught.value)


def test_CS_17_activations_replay_from_history() -> None:
    item = CATALOG.activate("math", [])
    assert (
        item is not None and item.kind == "tools" and item.enable == ["calculate", "convert_units"]
    )
    assert CATALOG.activate("math", ["math"]) is None
    rows: list[Message] = [ChatMessage(role="user", content="add"), item.to_message()]
    active = CATALOG.active_from_history(rows)
    assert active == ["math"]
    assert "calculate" in CATALOG.visible_tools(active)
    assert CATALOG.activation_tool(active) is not None
