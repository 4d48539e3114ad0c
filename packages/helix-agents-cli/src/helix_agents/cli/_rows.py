"""A row as ``show`` prints it: its text, and the tool calls it makes, whoever wrote it.

Core rows carry ``tool_calls``; the OpenAI Agents adapter keeps the SDK item
as JSON text in the provider field ``openai_item``, the ADK adapter the event
in ``adk_event`` (docs/integrations/). Their calls and results are read from
those fields, so a function call shows as ``name(arguments)`` and not as an
empty content.
"""

from __future__ import annotations

import json
from typing import Any

from helix_agents.core import ContextMessage, Message
from helix_agents.core.messages import dump_message

__all__ = ["row_calls", "row_text"]

OPENAI_ITEM = "openai_item"
ADK_EVENT = "adk_event"


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _provider(data: dict[str, Any], field: str) -> Any:
    """The JSON a provider field holds as text, ``None`` if it has none or holds no JSON."""
    text = data.get(field)
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _adk_parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    event = _provider(data, ADK_EVENT)
    content = event.get("content") if isinstance(event, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _part(part: dict[str, Any], snake: str, camel: str) -> dict[str, Any] | None:
    value = part.get(snake, part.get(camel))
    return value if isinstance(value, dict) else None


def row_calls(row: Message) -> list[dict[str, Any]]:
    """The tool calls of the row: ``{"name", "arguments"}`` each (``[]`` for none)."""
    if isinstance(row, ContextMessage):
        return []
    data = dump_message(row)
    item = _provider(data, OPENAI_ITEM)
    if isinstance(item, dict) and item.get("type") == "function_call":
        return [{"name": item.get("name"), "arguments": item.get("arguments")}]
    calls = []
    for part in _adk_parts(data):
        call = _part(part, "function_call", "functionCall")
        if call is not None:
            calls.append({"name": call.get("name"), "arguments": call.get("args")})
    for call in data.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function")
            if not isinstance(function, dict):
                function = call  # core's flat {"id", "name", "arguments"}
            calls.append({"name": function.get("name"), "arguments": function.get("arguments")})
    return calls


def _results(data: dict[str, Any]) -> list[str]:
    item = _provider(data, OPENAI_ITEM)
    if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
        return [f"{item.get('call_id', '')} → {_json(item.get('output'))}"]
    found = []
    for part in _adk_parts(data):
        answer = _part(part, "function_response", "functionResponse")
        if answer is not None:
            found.append(f"{answer.get('name', '')} → {_json(answer.get('response'))}")
    return found


def row_text(row: Message) -> str:
    """The row's content, then its calls (``name(arguments)``) and results (``→ output``)."""
    if isinstance(row, ContextMessage):
        return row.content
    data = dump_message(row)
    content = data.get("content")
    texts = [] if content is None else [_json(content)]
    texts += [f"{c['name']}({_json(c['arguments'] or '')})" for c in row_calls(row)]
    texts += _results(data)
    return " ".join(texts)
