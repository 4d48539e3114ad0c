"""What a search's ``filter`` and ``query`` match, and which namespaces a listing keeps
(LGM-3, LGM-4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition

__all__ = ["OPERATORS", "matches_conditions", "matches_filter", "matches_query", "words"]

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def matches_filter(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether every field of ``wanted`` matches the value's field of that name."""
    return all(_matches(value.get(name), want) for name, want in wanted.items())


def _matches(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(name.startswith("$") for name in want):
            return all(_compare(have, op, operand) for op, operand in want.items())
        return isinstance(have, dict) and matches_filter(have, want)
    if isinstance(want, list | tuple):
        return (
            isinstance(have, list)
            and len(have) == len(want)
            and all(_matches(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _compare(have: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(have == operand)
    if op == "$ne":
        return bool(have != operand)
    try:
        left, right = float(have), float(operand)
    except (TypeError, ValueError):  # not numbers: an order comparison matches nothing
        return False
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    return left <= right  # "$lte": the operators were checked with the op


def words(query: str) -> list[str]:
    """The words of a plain-text query, case-folded."""
    return query.casefold().split()


def matches_query(value: Mapping[str, Any], wanted: list[str]) -> bool:
    """Whether each word occurs in the value's text: its strings, numbers and keys."""
    parts: list[str] = []
    _text(value, parts)
    text = "\n".join(parts).casefold()
    return all(word in text for word in wanted)


def _text(value: Any, into: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            into.append(key)
            _text(item, into)
    elif isinstance(value, list):
        for item in value:
            _text(item, into)
    elif isinstance(value, str):
        into.append(value)
    elif value is not None and not isinstance(value, bool):
        into.append(str(value))


def matches_conditions(namespace: tuple[str, ...], conditions: tuple[MatchCondition, ...]) -> bool:
    """Whether ``namespace`` meets every prefix or suffix condition (``*``: any one label)."""
    for condition in conditions:
        path = condition.path
        if len(namespace) < len(path):
            return False
        compared = (
            namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
        )
        if path and not all(want in ("*", have) for have, want in zip(compared, path, strict=True)):
            return False
    return True
