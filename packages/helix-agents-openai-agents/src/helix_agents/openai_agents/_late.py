"""Tool outputs refused with their run, queued as late answers (OAI-3)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from helix_agents.core import ChatMessage, LateAnswer, SessionStateStore

from ._items import decode_item

__all__ = ["record_late_answers"]

_UNKNOWN_TOOL = "unknown"


async def record_late_answers(
    store: SessionStateStore, session_id: str, rows: Sequence[ChatMessage]
) -> int:
    """Queue the ``function_call_output`` items of a batch a superseded run could not write.

    Each is queued once per call id (a repeat is a no-op), unfenced: it belongs to the
    session, not to the run that ended. Returns how many were queued now.
    """
    items = [item for row in rows if (item := decode_item(row, session_id)) is not None]
    outputs: list[dict[str, Any]] = [
        dict(item) for item in items if item.get("type") == "function_call_output"
    ]
    if not outputs:
        return 0
    names = _call_names(items)
    missing = {str(o.get("call_id")) for o in outputs} - names.keys()
    if missing:
        for row in await store.get_messages(session_id):
            item = decode_item(row, session_id)
            if item is not None:
                names.update((k, v) for k, v in _call_names([item]).items() if k in missing)
    now = datetime.now(UTC)
    recorded = 0
    for output in outputs:
        call_id = str(output.get("call_id"))
        answer = LateAnswer(
            call_id=call_id,
            tool_name=names.get(call_id, _UNKNOWN_TOOL),
            output=output.get("output"),
            at=now,
        )
        result = await store.record_late_answer(session_id, answer)
        recorded += result.recorded
    return recorded


def _call_names(items: Sequence[Any]) -> dict[str, str]:
    return {
        str(item["call_id"]): str(item.get("name", _UNKNOWN_TOOL))
        for item in items
        if item.get("type") == "function_call" and "call_id" in item
    }
