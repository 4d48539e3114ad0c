"""The model's tools over the store's context: ``read_tool_output``, ``recall_history``,
``activate_tool_source`` (LGF-8, LGF-10).

Each is a LangChain tool for LangGraph's ``ToolNode``; it finds its session through the
:class:`HelixGraphRun` in the invocation's config. Each answers with text the model
reads; a store error is a line naming its code (core's ``error_text``), never an
exception that ends the run.
"""

from __future__ import annotations

from typing import cast

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from helix_agents.core.context import ContextStore
from helix_agents.core.context import read_tool_output as read_output
from helix_agents.core.context import recall_history as recall

from ._fence import ConfigRun, run_of

__all__ = ["activate_tool_source", "read_tool_output", "recall_history"]


@tool
async def read_tool_output(
    output_id: str,
    config: RunnableConfig,
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
    run: ConfigRun = run_of(config)
    return await read_output(
        cast(ContextStore, run.store),
        run.session_id,
        output_id,
        grep=grep,
        start_line=start_line,
        end_line=end_line,
    )


@tool
async def recall_history(
    config: RunnableConfig, grep: str | None = None, tool_name: str | None = None
) -> str:
    """Search this conversation's earlier messages, archived ones included, newest first.

    Args:
        grep: A regular expression (RE2) the message text must match.
        tool_name: Only rows about this tool.
    """
    run: ConfigRun = run_of(config)
    return await recall(
        cast(ContextStore, run.store), run.session_id, grep=grep, tool_name=tool_name
    )


@tool
async def activate_tool_source(source_name: str, config: RunnableConfig) -> str:
    """Enable the tools of one tool source listed under Available Tool Sources, so they
    can be called from the next model call on.

    Args:
        source_name: The source to enable.
    """
    run: ConfigRun = run_of(config)
    return await run.activate(source_name)
