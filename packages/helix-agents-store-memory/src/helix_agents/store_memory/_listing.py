"""Each user's sessions in listing order, kept up to date on every write; and every
session's id in order, for the store-wide listing (changed on create and delete only)."""

from __future__ import annotations

import bisect
import threading
from datetime import UTC, datetime, timedelta

__all__ = ["Listing"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def _key(at: datetime, session_id: str) -> tuple[int, str]:
    # Ascending order of this key is the listing order: newest activity first, ties by id.
    return (-((at - _EPOCH) // _MICRO), session_id)


class Listing:
    """Sorted ``(activity, id)`` keys per user, so a page costs O(log n + page), not O(n)."""

    def __init__(self) -> None:
        self._keys: dict[str, list[tuple[int, str]]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._ids: list[str] = []
        self._ids_lock = threading.Lock()

    def _lock(self, user_id: str) -> threading.Lock:
        return self._locks.setdefault(user_id, threading.Lock())

    def add(self, user_id: str | None, at: datetime, session_id: str) -> None:
        """List a new session."""
        with self._ids_lock:
            bisect.insort(self._ids, session_id)
        self._place(user_id, at, session_id)

    def remove(self, user_id: str | None, at: datetime, session_id: str) -> None:
        """Stop listing a deleted session."""
        with self._ids_lock:
            i = bisect.bisect_left(self._ids, session_id)
            if i < len(self._ids) and self._ids[i] == session_id:
                del self._ids[i]
        self._unplace(user_id, at, session_id)

    def _place(self, user_id: str | None, at: datetime, session_id: str) -> None:
        if user_id is not None:
            with self._lock(user_id):
                bisect.insort(self._keys.setdefault(user_id, []), _key(at, session_id))

    def _unplace(self, user_id: str | None, at: datetime, session_id: str) -> None:
        if user_id is not None:
            with self._lock(user_id):
                keys = self._keys.get(user_id, [])
                i = bisect.bisect_left(keys, _key(at, session_id))
                if i < len(keys) and keys[i] == _key(at, session_id):
                    del keys[i]

    def move(self, user_id: str | None, old: datetime, new: datetime, session_id: str) -> None:
        """Re-place a session whose activity moved from ``old`` to ``new``."""
        if user_id is not None and old != new:
            self._unplace(user_id, old, session_id)
            self._place(user_id, new, session_id)

    def page(self, user_id: str, after: tuple[datetime, str] | None, size: int) -> list[str]:
        """Up to ``size`` session ids after the cursor position, in listing order."""
        with self._lock(user_id):
            keys = self._keys.get(user_id, [])
            start = 0 if after is None else bisect.bisect_right(keys, _key(*after))
            return [session_id for _, session_id in keys[start : start + size]]

    def page_ids(self, after_id: str | None, size: int) -> list[str]:
        """Up to ``size`` session ids after ``after_id``, ascending."""
        with self._ids_lock:
            start = 0 if after_id is None else bisect.bisect_right(self._ids, after_id)
            return self._ids[start : start + size]
