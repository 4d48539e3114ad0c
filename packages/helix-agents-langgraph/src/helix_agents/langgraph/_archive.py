"""Messages the graph trims, archived first and searchable by ``recall_history`` (LGF-9).

The trimmed messages are appended to the session's log as chat rows, then a compaction
moves the context window past them: core's history search finds them there (and in the
archive, once retention moves them), and the reconciliation of LGF-2 never shows a
context row from before the window again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore
from helix_agents.core.context import Compaction, ContextStore, ContextStrategy, features

from ._context import ROW_ID_PREFIX

__all__ = ["archive", "chat_row", "trim_point"]

_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


def chat_row(message: BaseMessage) -> ChatMessage:
    """The log row that keeps ``message`` searchable: role, text, tool calls, tool name."""
    extra: dict[str, Any] = {}
    if isinstance(message, AIMessage) and message.tool_calls:
        extra["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
            }
            for call in message.tool_calls
        ]
    if isinstance(message, ToolMessage):
        extra["tool_call_id"] = message.tool_call_id
        if message.name:
            extra["name"] = message.name
    content: Any = message.content
    return ChatMessage(role=_ROLES.get(message.type, "user"), content=content, **extra)


def trim_point(messages: Sequence[AnyMessage], keep: int) -> int:
    """How many of the oldest ``messages`` go so that about ``keep`` stay: the kept part
    never starts with a tool result (its call would be gone)."""
    cut = max(0, len(messages) - keep)
    while cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut += 1
    return cut if cut < len(messages) else 0


async def archive(
    store: SessionStateStore,
    session_id: str,
    fence_run_id: str,
    strategy: ContextStrategy,
    trimmed: Sequence[BaseMessage],
) -> None:
    """Append ``trimmed`` to the log (under ``hybrid`` and ``dynamic``; a context row is
    there already) and move the window to the end of the log, fenced by the run."""
    rows = []
    if features(strategy).preserve_history:
        rows = [chat_row(m) for m in trimmed if not (m.id or "").startswith(ROW_ID_PREFIX)]
    if rows:
        await store.append_messages(
            session_id, MessageCommit(messages=tuple(rows), fence_run_id=fence_run_id)
        )
    context = cast(ContextStore, store)
    window = await context.get_window(session_id)
    count = window.start + len(window.messages)
    if count > window.start:
        summary = f"{len(trimmed)} earlier messages were trimmed"
        if rows:
            summary += "; recall_history searches them"
        await context.record_compaction(
            session_id,
            Compaction(
                boundary=count,
                summary=summary,
                strategy=strategy,
                expect_window_start=window.start,
            ),
        )
