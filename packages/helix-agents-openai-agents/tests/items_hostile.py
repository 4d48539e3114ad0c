"""SDK-shaped items a hostile caller sends, and, independently of the adapter, which of them
docs/integrations/sharing.md (ADP-4, ADP-5) says come back exactly.

The predicate restates the rules from JSON itself (what ``json.loads(json.dumps(x))``
gives back, type for type and key for key) and core's limits; it shares no code
with the adapter's check.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["MAX_DEPTH", "exact", "hostile_items", "nested", "same"]

MAX_DEPTH = 100
MAX_INT_DIGITS = 600
# NUL, lone surrogates, escapes JSON and JavaScript disagree on, astral and noncharacters.
ODD_TEXT = ("\x00", "a\x00b", "\ud800", "x\udfffy", "\u2028\u2029", "\U0001f600", "\uffff", '"\\')


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
        if isinstance(item, (dict, list, tuple)):
            deepest = max(deepest, level + 1)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, keys in the same order (``1`` is not
    ``1.0``, ``-0.0`` is not ``0.0``, a tuple is not a list)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return bool(a.hex() == b.hex())
    return bool(a == b)


def _big_int(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, int) and abs(item) >= 10**MAX_INT_DIGITS:
            return True
    return False


def exact(item: Any) -> bool:
    """Whether the rules say ``item`` is accepted: an object JSON gives back the same,
    within core's depth and integer limits."""
    if not isinstance(item, dict) or _depth(item) > MAX_DEPTH or _big_int(item):
        return False
    try:
        back = json.loads(json.dumps(item, allow_nan=False))
    except (TypeError, ValueError):
        return False
    return same(back, item)


_text = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=8), st.sampled_from(ODD_TEXT)
)
_number = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**599, -(10**599), 10**600, -(10**600), 2**63, -(2**63) - 1]),
    st.floats(),
    st.sampled_from([-0.0, 1e308, 5e-324, 0.1, float("nan"), float("inf"), float("-inf")]),
)
_scalar = st.one_of(st.none(), st.booleans(), _number, _text)
# Mostly string keys; now and then one JSON would turn into a string (or cannot hold).
_key = st.one_of(
    _text,
    _text,
    _text,
    st.sampled_from([1, 0, -1, True, None, 1.5, (1, 2)]),
)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_key, inner, max_size=3),
        st.tuples(inner, inner),
    ),
    max_leaves=8,
)
# Deep values: an item holding one of these is 1 + depth deep, around the limit of 100.
_value = st.one_of(
    _json, _json, _json, st.builds(nested, st.sampled_from([97, 98, 99, 100, 150]), _scalar)
)

_messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system", "developer"]),
        "content": st.one_of(
            _text,
            st.lists(
                st.fixed_dictionaries(
                    {"type": st.just("input_text"), "text": _text},
                    optional={"annotations": _value},
                ),
                max_size=3,
            ),
        ),
    },
    optional={"type": st.just("message"), "id": _text, "status": _value},
)
_calls = st.fixed_dictionaries(
    {
        "type": st.just("function_call"),
        "call_id": _text,
        "name": _text,
        "arguments": _text,
    },
    optional={"id": _text, "status": _value},
)
_outputs = st.fixed_dictionaries(
    {"type": st.sampled_from(["function_call_output", "shell_call_output"]), "call_id": _text},
    optional={"output": _value},
)
_other = st.builds(
    lambda kind, rest: {"type": kind, **rest},
    st.one_of(st.sampled_from(["reasoning", "compaction", "mcp_call", "item_reference"]), _text),
    st.dictionaries(_key, _value, max_size=3),
)

hostile_items: st.SearchStrategy[Any] = st.one_of(_messages, _calls, _outputs, _other)
"""SDK-shaped items whose values are anything: odd text, big ints, NaN, tuples, non-string
keys, deep nesting."""
