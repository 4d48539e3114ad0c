"""Hostile inputs for the INP rules: Hypothesis strategies, and what the limits say of them.

The predicates here restate docs/limits.md independently of core's checks, so
a store (or a core) that refuses too much or too little fails the rules.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "ID_EDGE",
    "MAX_DEPTH",
    "MAX_ID_BYTES",
    "ODD_TEXT",
    "forged_b64",
    "hostile_ids",
    "hostile_json",
    "id_ok",
    "json_ok",
    "nested",
    "same_json",
]

MAX_DEPTH = 100
MAX_ID_BYTES = 512
MAX_INT_DIGITS = 600
# Text that has broken stores: NUL, lone surrogates, the Postgres store's escape characters,
# separators JSON and JavaScript disagree on, combining marks, right-to-left overrides,
# emoji (astral plane), noncharacters and the byte-order mark.
ODD_TEXT = (
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\ue000",
    "\ue000\ue002",
    "\u2028\u2029",
    "e\u0301\u0327",
    "\u202eabc\u202c",
    "\U0001f600\U0001f469\u200d\U0001f4bb",
    "\ufdd0\uffff\U0010ffff",
    "\ufeff",
    '"\\/\b\f\n\r\t',
    "1e+5",
)
# An id of exactly MAX_ID_BYTES: 170 three-byte characters and two ASCII letters.
ID_EDGE = "\u20ac" * 170 + "ab"


def nested(depth: int, leaf: Any = 0) -> Any:
    """``leaf`` inside ``depth`` levels of alternating lists and objects."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level + 1)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_ok(value: Any) -> bool:
    """Whether docs/limits.md says a store accepts ``value`` as a JSON value."""
    if _depth(value) > MAX_DEPTH:
        return False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not _valid_text(item):
                return False
        elif isinstance(item, dict):
            if not all(isinstance(k, str) and _valid_text(k) for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if len(str(abs(item))) > MAX_INT_DIGITS:
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        else:
            return False
    return True


def id_ok(value: object) -> bool:
    """Whether docs/limits.md says a store accepts ``value`` as an id."""
    if not isinstance(value, str) or "\x00" in value or not _valid_text(value):
        return False
    return 0 < len(value.encode("utf-8")) <= MAX_ID_BYTES


def same_json(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON types all the way down (``1`` is not ``1.0``).

    Key order is not compared: JSON objects are unordered, and ``jsonb`` sorts keys.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def forged_b64(raw: bytes) -> str:
    """``raw`` as an unpadded url-safe base64 string, the way cursors are written."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def forged_cursor(payload: object) -> str:
    """A cursor carrying ``payload`` as its JSON."""
    return forged_b64(json.dumps(payload).encode())


_any_text = st.text(st.characters(exclude_categories=()), max_size=12)
_text = st.one_of(
    _any_text, st.sampled_from(ODD_TEXT), st.integers(1, 4).map(lambda n: "\u00e9" * 25_000 * n)
)
_number = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**599, -(10**599), 10**600, -(10**600)]),
    st.floats(),
    st.sampled_from([1e308, 5e-324, -0.0, 1e100, 0.1]),
)
_scalar = st.one_of(st.none(), st.booleans(), _number, _text)
_keys = st.one_of(_any_text, st.sampled_from(ODD_TEXT))


def _wide(n: int) -> Any:
    return {f"k{i}": [i, str(i)] for i in range(n)}


hostile_json: st.SearchStrategy[Any] = st.one_of(
    st.recursive(
        _scalar,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)
        ),
        max_leaves=12,
    ),
    st.builds(
        nested,
        st.sampled_from([MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 150, 250]),
        _scalar,
    ),
    st.integers(100, 3000).map(_wide),
)
"""JSON-ish values a hostile caller sends: deep, wide, NaN/inf, surrogates, NUL, huge, odd."""

hostile_ids: st.SearchStrategy[str] = st.one_of(
    st.text(st.characters(exclude_categories=()), min_size=0, max_size=8),
    st.sampled_from(ODD_TEXT),
    st.sampled_from(
        [ID_EDGE, ID_EDGE + "c", "x" * 512, "x" * 513, "y" * 10_000, "\U0001f600" * 128]
    ),
)
"""Id strings a hostile caller sends: empty, NUL, surrogates, at and over the byte limit."""
