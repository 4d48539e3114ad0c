"""The agent's side: tool results the model reads, every failure spelled out in them.

Each helper returns the text of a tool result. A store or input error becomes
a line naming its code and message — the model sees that its read, search,
offload or activation failed and why, never an empty answer that looks like
"nothing found".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..errors import StateStoreError
from ..messages import Message
from ..models import MessageCommit
from ..protocol import SessionStateStore
from .budget import Budget
from .outputs import offload_summary
from .protocol import ContextStore
from .tools import ToolCatalog

__all__ = [
    "activate_tool_source",
    "error_text",
    "offload_output",
    "read_tool_output",
    "recall_history",
]

logger = logging.getLogger("helix_agents.core.context")


def error_text(err: StateStoreError) -> str:
    """A store error as a tool result: its code, whether a retry may help, its message."""
    retry = " (retrying may succeed)" if err.retryable else ""
    return f"[error {err.code}{retry}: {err.message}]"


async def offload_output(
    store: ContextStore,
    session_id: str,
    output: str,
    *,
    budget: Budget,
    tool_name: str | None = None,
    key: str | None = None,
) -> str:
    """What the conversation gets for a tool output: the output, or its offload summary.

    An output over ``budget.offload_tokens`` is stored and summarised. If the
    store fails, the output stays inline and a first line tells the model the
    offload failed, with the error — the run goes on, and nobody is misled.
    """
    if not budget.should_offload(output):
        return output
    try:
        ref = await store.store_output(session_id, output, tool_name=tool_name, key=key)
    except StateStoreError as err:
        logger.warning("session %r: offloading an output failed: %s", session_id, err)
        return f"[offload failed, the full output follows] {error_text(err)}\n{output}"
    return offload_summary(ref)


async def read_tool_output(
    store: ContextStore,
    session_id: str,
    output_id: str,
    *,
    grep: str | None = None,
    start_line: int = 1,
    end_line: int | None = None,
    context_lines: int = 2,
) -> str:
    """The ``read_tool_output`` tool: lines by range, or by ``grep`` with context."""
    try:
        if grep is not None:
            found = await store.grep_output(
                session_id, output_id, grep, context_lines=context_lines
            )
        else:
            found = await store.read_output(
                session_id, output_id, start_line=start_line, end_line=end_line
            )
    except StateStoreError as err:
        return error_text(err)
    return found.render()


async def recall_history(
    store: ContextStore,
    session_id: str,
    *,
    grep: str | None = None,
    tool_name: str | None = None,
    limit: int = 20,
) -> str:
    """The ``recall_history`` tool: matching rows of the archive and the live log."""
    try:
        found = await store.search_history(session_id, grep=grep, tool_name=tool_name, limit=limit)
    except StateStoreError as err:
        return error_text(err)
    lines = [
        f"row {h.index} ({h.role}{', ' + h.tool_name if h.tool_name else ''}"
        f"{', archived' if h.archived else ''}) line {h.line_number}: {h.line}"
        for h in found.hits
    ]
    return "\n".join([*lines, f"[{found.note}]"])


async def activate_tool_source(
    store: SessionStateStore,
    session_id: str,
    catalog: ToolCatalog,
    source_name: str,
    *,
    history: Sequence[Message] | None = None,
    fence_run_id: str | None = None,
) -> str:
    """The ``activate_tool_source`` tool: record a ``tools`` row enabling the source's tools.

    The active sources are replayed from ``history`` (default: the session's
    rows), so activations survive restarts. An unknown source is an error
    result naming the sources that can be activated.
    """
    try:
        rows = await store.get_messages(session_id) if history is None else history
        active = catalog.active_from_history(rows)
        item = catalog.activate(source_name, active)
        if item is None:
            return f"Tool source {source_name!r} is already active."
        await store.append_messages(
            session_id, MessageCommit(messages=(item.to_message(),), fence_run_id=fence_run_id)
        )
    except StateStoreError as err:
        return error_text(err)
    return item.content
