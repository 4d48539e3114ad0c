"""The differences between two checkpoint states, path by path (INS-4)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Change", "diff"]


@dataclass(frozen=True)
class Change:
    """One difference: at ``path``, a value ``added``, ``removed`` or ``changed``."""

    path: str
    what: Literal["added", "removed", "changed"]
    before: str | None
    after: str | None


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def diff(before: Any, after: Any, path: str = "$") -> list[Change]:
    """The changes from ``before`` to ``after``: objects key by key, arrays item by item
    (a longer array's extra items are added or removed), anything else compared whole."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[Change] = []
        for key in sorted(before.keys() | after.keys()):
            where = _key(path, key)
            if key not in after:
                changes.append(Change(where, "removed", _shown(before[key]), None))
            elif key not in before:
                changes.append(Change(where, "added", None, _shown(after[key])))
            else:
                changes += diff(before[key], after[key], where)
        return changes
    if isinstance(before, list) and isinstance(after, list):
        changes = []
        for i in range(max(len(before), len(after))):
            where = f"{path}[{i}]"
            if i >= len(after):
                changes.append(Change(where, "removed", _shown(before[i]), None))
            elif i >= len(before):
                changes.append(Change(where, "added", None, _shown(after[i])))
            else:
                changes += diff(before[i], after[i], where)
        return changes
    if type(before) is type(after) and before == after:
        return []
    return [Change(path, "changed", _shown(before), _shown(after))]
