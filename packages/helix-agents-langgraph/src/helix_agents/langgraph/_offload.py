"""Large tool outputs replaced in the graph state by their offload summary (LGF-7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from langchain_core.messages import AnyMessage, ToolMessage

from helix_agents.core import SessionStateStore
from helix_agents.core.context import Budget, ContextStore, offload_output

__all__ = ["offloaded"]


async def offloaded(
    store: SessionStateStore, session_id: str, budget: Budget, messages: Sequence[AnyMessage]
) -> list[ToolMessage]:
    """A copy of each ``ToolMessage`` of ``messages`` over the budget, its text the summary.

    The output is stored once per tool call id (the key ``lg-output:<tool_call_id>``), so
    a retry shows the same reference. The copy keeps the message's id: LangGraph's
    ``add_messages`` puts it in the original's place. A failed offload leaves the message
    as it is, and the next model call tries again.
    """
    context = cast(ContextStore, store)
    replaced: list[ToolMessage] = []
    for message in messages:
        if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
            continue
        text = message.content
        # A token covers at least one byte: a shorter text is under the budget uncounted.
        if len(text.encode()) <= budget.offload_tokens or not budget.should_offload(text):
            continue
        summary = await offload_output(
            context,
            session_id,
            text,
            budget=budget,
            tool_name=message.name,
            key=f"lg-output:{message.tool_call_id}",
        )
        if not summary.endswith(text):
            replaced.append(message.model_copy(update={"content": summary}))
    return replaced
