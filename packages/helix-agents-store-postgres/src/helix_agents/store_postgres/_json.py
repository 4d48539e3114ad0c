"""JSON text for ``jsonb`` columns that reads back exactly what was written.

``jsonb`` differs from JSON text in two ways that would break the exact
round trip of rows and payloads (MSG-1):

* it refuses the NUL character in strings, so ``"\\x00"`` (and the escape
  character itself, to stay reversible) are escaped with private-use
  characters, and unescaped on the way back;
* it keeps numbers as ``numeric`` and prints them without an exponent, so a
  float such as ``1e+100`` would come back as an int; floats are therefore
  written in positional notation with a fraction (``1000…0.0``).

Most values need neither: :func:`dumps` writes them with ``json.dumps`` and
takes the careful writer only when that text holds a NUL, the escape
character or a float with an exponent (or something that looks like one).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from helix_agents.core import Message, ValidationError
from helix_agents.core.backend import parse_message_json, parse_messages_json
from helix_agents.core.messages import dump_message, parse_message

__all__ = ["dump_rows", "dumps", "loads", "parse_row", "parse_rows"]

_ESCAPE = "\ue000"
_ESCAPES = {"\ue001": _ESCAPE, "\ue002": "\x00"}
_UNESCAPE = re.compile("\ue000([\ue001\ue002])")
# A float's exponent as json.dumps and pydantic_core write it, 1e+100 and 1e-07 (or text in
# a string that looks like one).
_EXPONENT = re.compile("[0-9]e[-+]")


def dumps(value: Any) -> str:
    """JSON text of ``value`` (JSON types only, string keys) for a ``jsonb`` parameter."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not _jsonb_would_alter(text):
        return text
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def loads(text: str) -> Any:
    """The value :func:`dumps` wrote, from the text of a ``jsonb`` value."""
    value = json.loads(text)
    return _unescape(value) if _ESCAPE in text else value


def dump_rows(rows: Sequence[Message], texts: list[str] | None) -> str:
    """The rows as one ``jsonb`` array parameter. ``texts`` is their JSON as core wrote it
    while checking them (``coerce_commit``), sent as it is where ``jsonb`` keeps it."""
    if texts is not None:
        text = "[" + ",".join(texts) + "]"
        if not _jsonb_would_alter(text):
            return text
    return dumps([dump_message(m) for m in rows])


def parse_row(text: str) -> Message:
    """The row :func:`dumps` wrote, from the text of its ``jsonb`` body."""
    if _ESCAPE in text:
        return parse_message(loads(text))
    return parse_message_json(text)


def parse_rows(texts: list[str]) -> list[Message]:
    """:func:`parse_row` of each text, validated in one call where it can be.

    Each text is one ``jsonb`` value as the server prints it, so joined by commas
    they are an array of exactly those values. Anything unusual (the escape
    character, a row that does not validate) goes row by row, which raises the
    error a single row would.
    """
    if len(texts) > 1:
        joined = "[" + ",".join(texts) + "]"
        if _ESCAPE not in joined:
            try:
                return parse_messages_json(joined)
            except ValidationError:
                pass
    return [parse_row(text) for text in texts]


def _jsonb_would_alter(text: str) -> bool:
    # An escaped NUL, the escape character, a float's exponent; a false alarm
    # (the same characters inside a string) only costs the careful writer.
    if "\\u0000" in text or _ESCAPE in text:
        return True
    return ("e+" in text or "e-" in text) and _EXPONENT.search(text) is not None


def _write(value: Any, out: list[str]) -> None:
    if value is None or isinstance(value, bool):
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, str):
        out.append(json.dumps(_escape(value), ensure_ascii=False))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {type(key).__name__}")
            out.append("," if i else "")
            out.append(json.dumps(_escape(key), ensure_ascii=False))
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a JSON number")
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else f"{text}.0"


def _escape(text: str) -> str:
    if _ESCAPE in text:
        text = text.replace(_ESCAPE, _ESCAPE + "\ue001")
    if "\x00" in text:
        text = text.replace("\x00", _ESCAPE + "\ue002")
    return text


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return _UNESCAPE.sub(lambda m: _ESCAPES[m.group(1)], value)
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    if isinstance(value, dict):
        return {_unescape(key): _unescape(item) for key, item in value.items()}
    return value
