"""One message of every part kind of the installed pydantic-ai (PAI-3).

The kinds are read from the ``ModelRequestPart`` and ``ModelResponsePart`` unions, so a
release that adds one is covered by :func:`minimal_parts` without an edit here: each kind
is built from its own JSON schema with every required field filled. :func:`rich_messages`
adds hand-made parts with the optional fields set (multimodal prompts, tool arguments as
a dict and as text, thinking signatures, retries with error details).
"""

from __future__ import annotations

import dataclasses
import typing
from datetime import UTC, datetime
from typing import Any

import pydantic
import pydantic_ai.messages as pm
from pydantic_ai.usage import RequestUsage

__all__ = ["all_messages", "minimal_parts", "part_kinds", "rich_messages"]

_WHEN = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _members(union: object) -> list[type]:
    found: list[type] = []
    for arg in typing.get_args(union):
        if isinstance(arg, type) and dataclasses.is_dataclass(arg):
            found.append(arg)
        else:
            found += _members(arg)
    return found


def part_kinds() -> dict[str, list[type]]:
    """The part classes of requests and of responses."""
    return {
        "request": list(dict.fromkeys(_members(pm.ModelRequestPart))),
        "response": list(dict.fromkeys(_members(pm.ModelResponsePart))),
    }


def _value(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value that fits ``schema``, with every required property filled."""
    if "$ref" in schema:
        return _value(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _value(options[0], defs)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _value(props[name], defs) for name in schema.get("required", [])}
    if kind == "array":
        return [_value(schema["items"], defs)] if "items" in schema else []
    if kind == "string":
        if schema.get("format") == "date-time":
            return _WHEN.isoformat()
        if schema.get("format") in ("binary", "base64", "base64url"):
            return "aGk="
        return "x"
    scalars: dict[Any, Any] = {"integer": 1, "number": 1.5, "boolean": True, "null": None}
    return scalars.get(kind, "x")


def _deprecated(cls: type) -> bool:
    """Whether ``cls`` is marked deprecated (a kind the release only reads back)."""
    return getattr(cls, "__deprecated__", None) is not None


def minimal_parts(side: str) -> list[Any]:
    """One part of each kind of ``side`` (``request`` or ``response``), from its schema."""
    parts = []
    for cls in part_kinds()[side]:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(cls)
        schema = adapter.json_schema(mode="validation")
        if _deprecated(cls):
            continue
        value = _value(schema, schema.get("$defs", {}))
        if "speaker" in value:  # a request's speech is the user's, a response's the model's
            value["speaker"] = "user" if side == "request" else "assistant"
        parts.append(adapter.validate_python(value))
    return parts


def rich_messages() -> list[pm.ModelMessage]:
    """Requests and responses whose parts have their optional fields set."""
    prompt = pm.UserPromptPart(
        [
            "look at these",
            pm.ImageUrl(url="https://example.com/cat.png"),
            pm.BinaryContent(data=b"\x89PNG\r\n\x00\xff", media_type="image/png"),
            pm.DocumentUrl(url="https://example.com/a.pdf"),
            pm.AudioUrl(url="https://example.com/a.mp3"),
        ],
        timestamp=_WHEN,
    )
    return [
        pm.ModelRequest(
            parts=[
                pm.SystemPromptPart("be brief", timestamp=_WHEN),
                prompt,
                pm.UserPromptPart("héllo \U0001f600 \u2028", timestamp=_WHEN),
            ],
            instructions="answer in French",
        ),
        pm.ModelResponse(
            parts=[
                pm.ThinkingPart("let me think", signature="sig", provider_name="p"),
                pm.TextPart("calling tools"),
                pm.ToolCallPart("weather", {"city": "Paris", "days": [1, 2], "deep": {"a": None}}),
                pm.ToolCallPart("raw", '{"x": 1}', tool_call_id="call-2"),
            ],
            model_name="function:model",
            timestamp=_WHEN,
            usage=RequestUsage(input_tokens=12, output_tokens=7),
            provider_response_id="resp-1",
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart("weather", {"temp": 21.5, "ok": True}, tool_call_id="c1"),
                pm.ToolReturnPart("raw", "text result", tool_call_id="call-2", timestamp=_WHEN),
                *_retries(),
            ]
        ),
    ]


def _retries() -> list[Any]:
    """Retry parts: ``RetryFeedbackPart`` where the release has it (it replaced
    ``RetryPromptPart``, which such a release reads back as the new kind)."""
    errors: list[Any] = [
        {"type": "missing", "loc": ("city",), "msg": "Field required", "input": {}}
    ]
    if hasattr(pm, "RetryFeedbackPart"):
        return [
            pm.RetryFeedbackPart("try again", retry=pm.RetryInfo(cause="model_retry")),
            pm.RetryFeedbackPart(errors, retry=pm.RetryInfo(cause="validation_error", attempt=1)),
        ]
    return [
        pm.RetryPromptPart("try again", tool_name="weather", tool_call_id="c3"),
        pm.RetryPromptPart(errors, tool_name="weather", tool_call_id="c4"),
    ]


def all_messages() -> list[pm.ModelMessage]:
    """The rich messages, then a request and a response holding one part of every kind."""
    return [
        *rich_messages(),
        pm.ModelRequest(parts=minimal_parts("request")),
        pm.ModelResponse(parts=minimal_parts("response"), timestamp=_WHEN),
    ]
