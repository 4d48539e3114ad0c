"""The model's tools over the store's context: ``read_tool_output``, ``recall_history`` (OAI-7).

Each answers with text the model reads; a store error is a line naming its code
(core's ``error_text``), never an exception that ends the run. The SDK builds a
tool's schema from its signature once, here; a run gets copies bound to its session.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

from agents import FunctionTool, RunContextWrapper, function_tool

from helix_agents.core import SessionStateStore
from helix_agents.core.context import ContextStore
from helix_agents.core.context import read_tool_output as read_output
from helix_agents.core.context import recall_history as recall

__all__ = ["context_tools"]


@function_tool
def read_tool_output(
    output_id: str, grep: str | None = None, start_line: int = 1, end_line: int | None = None
) -> str:
    """Read back an offloaded tool output: lines start_line..end_line, or the lines
    matching the regular expression grep (with their neighbours).

    Args:
        output_id: The id the offload summary names (out-...).
        grep: A regular expression (RE2) to search the output for.
        start_line: The first line to read (1-based).
        end_line: The last line to read (default: as many as fit).
    """
    raise NotImplementedError  # the schema only: context_tools binds the body


@function_tool
def recall_history(grep: str | None = None, tool_name: str | None = None) -> str:
    """Search this conversation's earlier messages, archived ones included, newest first.

    Args:
        grep: A regular expression (RE2) the message text must match.
        tool_name: Only rows about this tool.
    """
    raise NotImplementedError  # the schema only: context_tools binds the body


def _bound(
    template: FunctionTool, body: Callable[[dict[str, Any]], Awaitable[str]]
) -> FunctionTool:
    async def invoke(_: RunContextWrapper[Any], arguments: str) -> str:
        # The SDK checked the arguments against the strict schema before calling.
        return await body(json.loads(arguments or "{}"))

    return dataclasses.replace(template, on_invoke_tool=invoke)


def context_tools(store: SessionStateStore, session_id: str) -> list[FunctionTool]:
    """``read_tool_output`` and ``recall_history`` on the session ``session_id``."""
    context = cast(ContextStore, store)

    async def read(args: dict[str, Any]) -> str:
        return await read_output(
            context,
            session_id,
            str(args["output_id"]),
            grep=args.get("grep"),
            start_line=args.get("start_line") or 1,
            end_line=args.get("end_line"),
        )

    async def search(args: dict[str, Any]) -> str:
        return await recall(
            context, session_id, grep=args.get("grep"), tool_name=args.get("tool_name")
        )

    return [_bound(read_tool_output, read), _bound(recall_history, search)]
