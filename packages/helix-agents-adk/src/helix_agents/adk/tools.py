"""The model's tools over the store's context: ``read_tool_output``, ``recall_history`` (ADKF-7).

Each answers with text the model reads; a store error is a line naming its code (core's
``error_text``), never an exception that ends the run. Each finds its session through
ADK's ``ToolContext``, so one pair serves every session of the plugin's store.
"""

from __future__ import annotations

from typing import cast

from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from helix_agents.core import SessionStateStore
from helix_agents.core.context import ContextStore
from helix_agents.core.context import read_tool_output as read_output
from helix_agents.core.context import recall_history as recall

from ._runs import session_key

__all__ = ["context_tools"]


def _sid(tool_context: ToolContext) -> str:
    session = tool_context.session
    return session_key(session.app_name, session.user_id, session.id)


def context_tools(store: SessionStateStore) -> list[FunctionTool]:
    """``read_tool_output`` and ``recall_history`` on the sessions of ``store``."""
    context = cast(ContextStore, store)

    async def read_tool_output(
        output_id: str,
        tool_context: ToolContext,
        grep: str = "",
        start_line: int = 1,
        end_line: int = 0,
    ) -> str:
        """Read back an offloaded tool output: lines start_line..end_line, or the lines
        matching the regular expression grep (with their neighbours).

        Args:
            output_id: The id the offload summary names (out-...).
            grep: A regular expression (RE2) to search the output for; empty for none.
            start_line: The first line to read (1-based).
            end_line: The last line to read (0: as many as fit).
        """
        return await read_output(
            context,
            _sid(tool_context),
            output_id,
            grep=grep or None,
            start_line=start_line,
            end_line=end_line or None,
        )

    async def recall_history(tool_context: ToolContext, grep: str = "", tool_name: str = "") -> str:
        """Search this conversation's earlier messages, archived ones included, newest first.

        Args:
            grep: A regular expression (RE2) the message text must match; empty for any.
            tool_name: Only rows about this tool; empty for any.
        """
        return await recall(
            context, _sid(tool_context), grep=grep or None, tool_name=tool_name or None
        )

    return [FunctionTool(read_tool_output), FunctionTool(recall_history)]
