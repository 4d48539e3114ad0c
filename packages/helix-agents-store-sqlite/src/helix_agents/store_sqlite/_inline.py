"""Short reads on the event loop's own thread, while they stay short.

Handing a read to a connection's thread costs two thread wake-ups, which on a
machine with idle cores cost more than a short read itself
(docs/backends/sqlite.md, "Concurrency model"). A one-statement read first runs
here, on a connection of the event loop's thread that never waits for a lock
and stops SQLite past a time budget; a read that finds the file busy, runs
past the budget or fails in any other way of SQLite's is run again on the
reader's thread, which reports what happens there as every other read does.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["BUDGET", "MISSED", "InlineReader"]

_T = TypeVar("_T")

BUDGET = 0.001
"""Seconds of SQLite's work a read may take on the event loop's thread."""
_CHECK_EVERY = 1000  # SQLite virtual-machine steps between looks at the clock


class _Missed:
    """The read did not finish here: run it on the reader's thread."""

    __slots__ = ()


MISSED = _Missed()


class InlineReader:
    """A read-only connection of the thread that opened it (the event loop's)."""

    def __init__(self, database: str, uri: bool = False) -> None:
        # timeout=0: a lock held elsewhere sends the read to the reader's thread,
        # which waits busy_timeout for it, instead of blocking the event loop here.
        self._conn = sqlite3.connect(database, isolation_level=None, timeout=0, uri=uri)
        self._deadline = 0.0
        try:
            self._conn.execute("PRAGMA query_only = 1")
            self._conn.set_progress_handler(self._past_budget, _CHECK_EVERY)
        except BaseException:
            self._conn.close()
            raise

    def _past_budget(self) -> int:
        # Non-zero interrupts the statement (sqlite3.OperationalError: interrupted).
        return int(time.perf_counter() > self._deadline)

    def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T | _Missed:
        """``work``'s result, or :data:`MISSED` if SQLite refused, failed or ran out of time.

        sqlite3 refuses a call from another thread than the connection's: that is missed too.
        """
        self._deadline = time.perf_counter() + BUDGET
        try:
            return work(self._conn)
        except (sqlite3.Error, UnicodeEncodeError):
            return MISSED

    def close(self) -> None:
        """Close the connection (from its own thread; elsewhere it is left to be collected)."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
