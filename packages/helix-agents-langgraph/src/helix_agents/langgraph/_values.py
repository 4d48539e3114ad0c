"""Channel values, writes and metadata as JSON that comes back exactly, or a refusal.

Each value is stored as one of (docs/integrations/langgraph.md, "JSON only"):

* ``{"j": value}`` — plain JSON (``None``, booleans, ints, finite floats,
  strings without NUL, lists, dicts with string keys), as itself;
* ``{"l": [...]}``, ``{"u": [...]}``, ``{"d": [[key, value], ...]}`` — a list,
  tuple or dict that is not plain JSON, each part encoded the same way (so a
  tuple stays a tuple and an int key an int);
* ``{"t": kind, "b": "<base64>"}`` — any other value, through
  :class:`JsonPlusSerializer` with pickle off and only the msgpack types it lists
  as safe (plus ``allowed_modules``) revived.

A value core's rules refuse (NaN, infinity, a lone surrogate, an int of more
than ``MAX_INT_DIGITS`` digits, nesting past ``MAX_JSON_DEPTH``) is refused, and
so is one the serializer would give back changed (a class it would not rebuild,
a tuple inside an object): :class:`RefusedError`, before anything is written.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import JsonValue

from helix_agents.core.limits import MAX_INT_DIGITS, MAX_JSON_DEPTH

__all__ = ["JsonValues", "RefusedError", "same", "strict_serializer"]

# The typed encodings loading accepts: never "pickle", never "json" (the LangChain reviver).
_LOADABLE = frozenset({"msgpack", "bytes", "bytearray", "null"})
_INT_BOUND = 10**MAX_INT_DIGITS
_SURROGATE = re.compile("[\ud800-\udfff]")


def strict_serializer(allowed_modules: Iterable[tuple[str, ...]] = ()) -> JsonPlusSerializer:
    """LangGraph's serializer with pickle off and only safe (or ``allowed_modules``) types."""
    allowed = [tuple(m) for m in allowed_modules]
    return JsonPlusSerializer(
        pickle_fallback=False,
        allowed_json_modules=None,
        allowed_msgpack_modules=allowed or None,
    )


class RefusedError(Exception):
    """A value that cannot be stored exactly; ``path`` says where inside it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.parts: list[str] = []

    @property
    def path(self) -> str:
        """Where the refused part sits, as ``[0]['key']``."""
        path = "".join(reversed(self.parts))
        return path if len(path) <= 80 else f"{path[:40]}…{path[-30:]}"


def _text_ok(value: str) -> bool:
    return value.isascii() or not _SURROGATE.search(value)


def _plain(value: Any, depth: int) -> bool:
    """Whether ``value``, at JSON depth ``depth``, is stored as itself and comes back equal."""
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is int:
        return bool(-_INT_BOUND < value < _INT_BOUND)
    if kind is str:
        return "\x00" not in value and _text_ok(value)
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return depth < MAX_JSON_DEPTH and all(_plain(v, depth + 1) for v in value)
    if kind is dict:
        return depth < MAX_JSON_DEPTH and all(
            type(k) is str and "\x00" not in k and _text_ok(k) and _plain(v, depth + 1)
            for k, v in value.items()
        )
    return False


def _inside(exc: RefusedError, part: str) -> RefusedError:
    exc.parts.append(part)
    return exc


class JsonValues:
    """Encodes any value LangGraph stores into JSON, and back."""

    def __init__(self, serde: JsonPlusSerializer) -> None:
        self.serde = serde

    def dump(self, value: Any, depth: int = 0) -> JsonValue:
        """``value`` as JSON whose outer object sits ``depth`` deep in its record.

        Raises :class:`RefusedError` for a value that would not come back equal.
        """
        if depth >= MAX_JSON_DEPTH:
            raise RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels (as stored)")
        if _plain(value, depth + 1):
            return {"j": value}
        kind = type(value)
        if kind is list or kind is tuple:
            if depth + 1 >= MAX_JSON_DEPTH:
                raise RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels (as stored)")
            parts: list[JsonValue] = []
            for i, item in enumerate(value):
                try:
                    parts.append(self.dump(item, depth + 2))
                except RefusedError as exc:
                    raise _inside(exc, f"[{i}]") from None
            return {"l" if kind is list else "u": parts}
        if kind is dict:
            if depth + 2 >= MAX_JSON_DEPTH:
                raise RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels (as stored)")
            pairs: list[JsonValue] = []
            for key, item in value.items():
                try:
                    pairs.append([self.dump(key, depth + 3), self.dump(item, depth + 3)])
                except RefusedError as exc:
                    raise _inside(exc, f"[{_shown(key)}]") from None
            return {"d": pairs}
        return self._typed(value)

    def _typed(self, value: Any) -> JsonValue:
        kind = type(value)
        if kind is float:
            raise RefusedError(f"{value!r} is not a JSON number (numbers must be finite)")
        if kind is int:
            raise RefusedError(f"an integer has more than {MAX_INT_DIGITS} digits")
        if kind is str and not _text_ok(value):
            raise RefusedError("text is not valid Unicode (a lone surrogate)")
        try:
            typed = self.serde.dumps_typed(value)
            back = self.serde.loads_typed(typed)
        except Exception as exc:  # the serializer's refusal, whatever its class
            raise RefusedError(f"a {kind.__name__} cannot be stored: {exc}") from None
        if not same(value, back):
            raise RefusedError(
                f"a {kind.__name__} would load back as a {type(back).__name__} or changed "
                "(name its class in allowed_modules, or store plain data)"
            )
        return {"t": typed[0], "b": base64.b64encode(typed[1]).decode("ascii")}

    def load(self, doc: Any) -> Any:
        """The value ``doc`` encodes; anything else raises (the caller names the record)."""
        if isinstance(doc, dict) and len(doc) == 1:
            [(tag, body)] = doc.items()
            if tag == "j":
                return body
            if tag in ("l", "u") and isinstance(body, list):
                items = [self.load(item) for item in body]
                return items if tag == "l" else tuple(items)
            if tag == "d" and isinstance(body, list):
                return {self.load(k): self.load(v) for k, v in map(_pair, body)}
        elif isinstance(doc, dict) and len(doc) == 2:
            kind, data = doc.get("t"), doc.get("b")
            if kind in _LOADABLE and isinstance(data, str):
                return self.serde.loads_typed((kind, base64.b64decode(data, validate=True)))
        raise ValueError(f"not a stored LangGraph value: {str(doc)[:80]!r}")


def _pair(item: Any) -> tuple[Any, Any]:
    if not isinstance(item, list) or len(item) != 2:
        raise ValueError(f"not a stored key and value: {str(item)[:80]!r}")
    return item[0], item[1]


def _shown(key: Any) -> str:
    try:
        text = repr(key)
    except Exception:
        text = f"<{type(key).__name__}>"
    return text if len(text) <= 64 else f"{text[:32]}…"


def _plain_eq(kind: type) -> bool:
    """Whether ``kind`` compares by identity (object's own ``__eq__``)."""
    return getattr(kind, "__eq__", None) is getattr(object, "__eq__", None)


def same(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` come back exactly: equal, with the same types throughout."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    if type(a) is list or type(a) is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        if len(a) != len(b):
            return False
        keys = {k: k for k in b}  # b's own key objects, to compare their types too
        return all(k in b and same(k, keys[k]) and same(v, b[k]) for k, v in a.items())
    try:
        if _plain_eq(type(a)) and hasattr(a, "__dict__"):
            return same(vars(a), vars(b))
        return bool(a == b)
    except Exception:  # a comparison that fails (or recurses too deep) is not a match
        return False
