"""A page of rows as the session page shows it: context rows marked, tool calls paired
with their results by call id, and the offloaded outputs the rows name (docs/inspector.md,
INS-2)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from helix_agents.core import ContextMessage, Message
from helix_agents.core.messages import dump_message

from .._rows import OPENAI_ITEM, row_calls, row_text

__all__ = ["OUTPUT_ID", "Row", "output_ids", "transcript"]

# The ids core's new_output_id mints, as an offload summary names them.
OUTPUT_ID = re.compile(r"\bout-[0-9a-f]{32}\b")


@dataclass
class Row:
    """One row of the transcript: ``kind`` is the context kind of a hidden row."""

    index: int
    role: str
    text: str
    kind: str | None = None
    source: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    answers: str | None = None  # the call id a tool result answers
    answered_by: dict[str, int] = field(default_factory=dict)  # call id -> result row
    call_row: int | None = None  # the row of the call a result answers


def _openai_item(data: dict[str, Any]) -> dict[str, Any] | None:
    text = data.get(OPENAI_ITEM)
    if not isinstance(text, str):
        return None
    try:
        item = json.loads(text)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _call_ids(data: dict[str, Any]) -> list[str | None]:
    """The id of each call of ``row_calls`` order: core's ``tool_calls`` and the OpenAI item."""
    item = _openai_item(data)
    if item is not None and item.get("type") == "function_call":
        return [str(item.get("call_id", ""))]
    return [
        str(c["id"]) if isinstance(c, dict) and c.get("id") is not None else None
        for c in data.get("tool_calls") or []
    ]


def _answers(data: dict[str, Any]) -> str | None:
    item = _openai_item(data)
    if item is not None and str(item.get("type", "")).endswith("_output"):
        return str(item.get("call_id", ""))
    call_id = data.get("tool_call_id")
    return str(call_id) if call_id is not None else None


def _row(index: int, message: Message) -> Row:
    if isinstance(message, ContextMessage):
        return Row(index, "context", message.content, kind=message.kind, source=message.source)
    data = dump_message(message)
    calls = row_calls(message)
    ids = _call_ids(data)
    for k, call in enumerate(calls):
        call["id"] = ids[k] if k < len(ids) else None
    return Row(index, message.role, row_text(message), calls=calls, answers=_answers(data))


def transcript(first_index: int, messages: tuple[Message, ...]) -> list[Row]:
    """The rows of a page starting at ``first_index``, each call paired with its result."""
    rows = [_row(first_index + k, m) for k, m in enumerate(messages)]
    calls = {c["id"]: r for r in rows for c in r.calls if c["id"]}
    for r in rows:
        if r.answers and r.answers in calls:
            caller = calls[r.answers]
            caller.answered_by[r.answers] = r.index
            r.call_row = caller.index
    return rows


def output_ids(rows: list[Row]) -> list[str]:
    """The offloaded outputs the rows name, in order of first mention."""
    return list(dict.fromkeys(m for r in rows for m in OUTPUT_ID.findall(r.text)))
