"""Paged checkpoint reads of an in-process engine (CKP-3..CKP-6).

A session's checkpoints live in a :class:`CheckpointTable`: a dict that also
keeps its ids sorted, so a page is two binary searches and a slice, however
many checkpoints the session holds. Code that replaces the table with a plain
dict (a truncate, a clone) loses nothing: the next page re-sorts it once.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable
from typing import Any

from ..checkpoint_pages import CheckpointRange
from ..models import Checkpoint
from ._records import SessionRecords

__all__ = ["CheckpointTable", "page"]


class CheckpointTable(dict[str, Checkpoint]):
    """Checkpoints by id, with the ids kept in code point order."""

    __slots__ = ("ids",)

    def __init__(self, items: Iterable[tuple[str, Checkpoint]] = ()) -> None:
        super().__init__(items)
        self.ids: list[str] = sorted(self)

    def __setitem__(self, key: str, value: Checkpoint) -> None:
        if key not in self:
            insort(self.ids, key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        del self.ids[bisect_left(self.ids, key)]

    def pop(self, key: str, *default: Any) -> Any:
        """Remove ``key`` and return its checkpoint (or ``default``)."""
        if key in self:
            value = self[key]
            del self[key]
            return value
        return super().pop(key, *default)

    def clear(self) -> None:
        """Remove every checkpoint."""
        super().clear()
        self.ids.clear()

    def popitem(self) -> tuple[str, Checkpoint]:
        """Remove and return the last inserted checkpoint."""
        key, value = super().popitem()
        del self.ids[bisect_left(self.ids, key)]
        return key, value

    def setdefault(self, key: str, default: Checkpoint) -> Checkpoint:
        """The checkpoint under ``key``, storing ``default`` there first if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Checkpoint) -> None:
        """Store every given checkpoint."""
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> CheckpointTable:  # type: ignore[misc, override]
        self.update(other)
        return self


def _table(session: SessionRecords) -> CheckpointTable:
    if not isinstance(session.checkpoints, CheckpointTable):
        session.checkpoints = CheckpointTable(session.checkpoints.items())
    return session.checkpoints


def page(session: SessionRecords, where: CheckpointRange) -> list[Checkpoint]:
    """The checkpoints of ``where``, greatest id first (copies)."""
    table = _table(session)
    ids = table.ids
    low = bisect_left(ids, where.low)
    high = len(ids) if where.high is None else bisect_left(ids, where.high)
    chosen = ids[max(low, high - where.limit) : high]
    return [table[cid].model_copy(deep=True) for cid in reversed(chosen)]
