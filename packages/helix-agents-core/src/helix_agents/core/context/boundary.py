"""Where a compaction may cut: the largest safe split of the rows, found in linear time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..messages import ChatMessage, ContextMessage, Message

__all__ = ["Boundary", "find_compaction_boundary", "is_protected"]


@dataclass(frozen=True, slots=True)
class Boundary:
    """Cut before row ``index`` (0: no cut); ``reason`` says why when there is none."""

    index: int
    reason: str | None = None


def is_protected(row: Message) -> bool:
    """Rows compaction must keep: activated skill content and pinned context rows.

    A context row is protected when its ``source`` is ``"skill"`` or its
    metadata has ``"pinned": true``.
    """
    if not isinstance(row, ContextMessage):
        return False
    return row.source == "skill" or (row.metadata or {}).get("pinned") is True


def _call_ids(row: Message) -> list[str]:
    if not isinstance(row, ChatMessage) or row.role != "assistant":
        return []
    calls = (row.model_extra or {}).get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def _result_id(row: Message) -> str | None:
    if not isinstance(row, ChatMessage) or row.role != "tool":
        return None
    value = (row.model_extra or {}).get("tool_call_id")
    return value if isinstance(value, str) else None


def find_compaction_boundary(
    rows: Sequence[Message],
    *,
    keep_last: int = 4,
    protected: Callable[[Message], bool] = is_protected,
) -> Boundary:
    """The largest ``b`` such that dropping ``rows[:b]`` is safe; 0 with the reason if none.

    Safe means: the last ``keep_last`` rows stay; no protected row is dropped;
    and no tool result stays whose call is dropped — with parallel calls, the
    assistant row and all of its results go or stay together. O(len(rows)).
    """
    if keep_last < 0:
        raise ValueError("keep_last must be >= 0")
    n = len(rows)
    top = n - keep_last
    if top < 1:
        return Boundary(0, f"only {n} rows; the last {keep_last} are always kept")
    first_protected = next((i for i, row in enumerate(rows) if protected(row)), n)
    if first_protected < 1:
        return Boundary(0, "the first row is protected")
    top = min(top, first_protected)
    # A cut b in (call, result] would orphan the result: mark those cuts with a
    # difference array, so every pair costs O(1) however far apart they are.
    called_at: dict[str, int] = {}
    blocked = [0] * (n + 2)
    for i, row in enumerate(rows):
        for call_id in _call_ids(row):
            called_at[call_id] = i
        result = _result_id(row)
        if result is not None and result in called_at:
            blocked[called_at[result] + 1] += 1
            blocked[i + 1] -= 1
    covered = 0
    best = 0
    for b in range(1, top + 1):
        covered += blocked[b]
        if covered == 0:
            best = b
    if best == 0:
        why = "every cut would separate a tool result from its call"
        if top == first_protected and first_protected < n - keep_last:
            why += f" or drop the protected row {first_protected}"
        return Boundary(0, why)
    return Boundary(best)
