"""Channel values, writes and metadata as JSON, through LangGraph's serializer in strict mode.

A value that is plain JSON (``None``, booleans, numbers, strings without NUL,
lists, and dicts with string keys) is stored as itself, ``{"j": value}``.
Anything else goes through :class:`JsonPlusSerializer` with pickle off and
only the msgpack types it lists as safe (plus ``allowed_modules``) revived:
``{"t": "msgpack", "b": "<base64>"}``. Loading never unpickles and never
imports a class outside that list; such a value comes back as its fields.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import JsonValue

from helix_agents.core import ValidationError

__all__ = ["JsonValues", "strict_serializer"]

# The typed encodings loading accepts: never "pickle", never "json" (the LangChain reviver).
_LOADABLE = frozenset({"msgpack", "bytes", "bytearray", "null"})


def strict_serializer(allowed_modules: Iterable[tuple[str, ...]] = ()) -> JsonPlusSerializer:
    """LangGraph's serializer with pickle off and only safe (or ``allowed_modules``) types."""
    allowed = [tuple(m) for m in allowed_modules]
    return JsonPlusSerializer(
        pickle_fallback=False,
        allowed_json_modules=None,
        allowed_msgpack_modules=allowed or None,
    )


def _plain(value: Any) -> bool:
    """Whether ``value`` round-trips through JSON unchanged (types included)."""
    kind = type(value)
    if value is None or kind is bool or kind is int:
        return True
    if kind is str:
        return "\x00" not in value
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(v) for v in value)
    if kind is dict:
        return all(type(k) is str and "\x00" not in k and _plain(v) for k, v in value.items())
    return False


class JsonValues:
    """Encodes any value LangGraph stores into JSON, and back."""

    def __init__(self, serde: JsonPlusSerializer) -> None:
        self.serde = serde

    def dump(self, value: Any) -> JsonValue:
        """``value`` as JSON; a value the serializer cannot encode is a ValidationError."""
        if _plain(value):
            return {"j": value}
        try:
            kind, data = self.serde.dumps_typed(value)
        except Exception as exc:
            raise ValidationError(
                f"a value of type {type(value).__name__} cannot be stored as JSON: {exc}"
            ) from None
        return {"t": kind, "b": base64.b64encode(data).decode("ascii")}

    def load(self, doc: Any) -> Any:
        """The value ``doc`` encodes; an encoding other than JSON or msgpack is refused."""
        if isinstance(doc, dict):
            if "j" in doc:
                return doc["j"]
            kind = doc.get("t")
            if kind in _LOADABLE and isinstance(doc.get("b"), str):
                return self.serde.loads_typed((kind, base64.b64decode(doc["b"])))
        raise ValidationError(f"not a stored LangGraph value: {str(doc)[:80]!r}")
