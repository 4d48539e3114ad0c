"""The model's tools over the store's context: ``read_tool_output``, ``recall_history`` (OAI-7).

Each answers with text the model reads; a store error is a line naming its code
(core's ``error_text``), never an exception that ends the run.
"""

from __future__ import annotations

from typing import cast

from agents import FunctionTool, function_tool

from helix_agents.core import SessionStateStore
from helix_agents.core.context import ContextStore
from helix_agents.core.context import read_tool_output as read_output
from helix_agents.core.context import recall_history as recall

__all__ = ["context_tools"]


def context_tools(store: SessionStateStore, session_id: str) -> list[FunctionTool]:
    """``read_tool_output`` and ``recall_history`` on the session ``session_id``."""
    context = cast(ContextStore, store)

    @function_tool
    async def read_tool_output(
        output_id: str,
        grep: str | None = None,
        start_line: int = 1,
        end_line: int | None = None,
    ) -> str:
        """Read back an offloaded tool output: lines start_line..end_line, or the lines
        matching the regular expression grep (with their neighbours).

        Args:
            output_id: The id the offload summary names (out-...).
            grep: A regular expression (RE2) to search the output for.
            start_line: The first line to read (1-based).
            end_line: The last line to read (default: as many as fit).
        """
        return await read_output(
            context, session_id, output_id, grep=grep, start_line=start_line, end_line=end_line
        )

    @function_tool
    async def recall_history(grep: str | None = None, tool_name: str | None = None) -> str:
        """Search this conversation's earlier messages, archived ones included, newest first.

        Args:
            grep: A regular expression (RE2) the message text must match.
            tool_name: Only rows about this tool.
        """
        return await recall(context, session_id, grep=grep, tool_name=tool_name)

    return [read_tool_output, recall_history]
