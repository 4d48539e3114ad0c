"""Tool answers a superseded run could not store, queued as late answers (LGF-4)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import ToolMessage

from helix_agents.core import LateAnswer, SessionStateStore

__all__ = ["record_late_answers"]

_UNKNOWN_TOOL = "unknown"


def _tool_messages(writes: Sequence[tuple[str, Any]]) -> list[ToolMessage]:
    found: list[ToolMessage] = []
    for _, value in writes:
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, ToolMessage):
                found.append(message)
    return found


async def record_late_answers(
    store: SessionStateStore, session_id: str, writes: Sequence[tuple[str, Any]]
) -> int:
    """Queue each ``ToolMessage`` of ``writes`` as a late answer, once per tool call id.

    Unfenced: the answer belongs to the session, not to the run that ended. Returns
    how many were queued now.
    """
    now = datetime.now(UTC)
    recorded = 0
    for message in _tool_messages(writes):
        answer = LateAnswer(
            call_id=message.tool_call_id,
            tool_name=message.name or _UNKNOWN_TOOL,
            output=message.content,
            at=now,
        )
        recorded += (await store.record_late_answer(session_id, answer)).recorded
    return recorded
