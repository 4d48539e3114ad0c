"""A ``sqlite3`` connection with a thread of its own, used in whole transactions.

Every call is one plain function of the connection, run start to end on its
thread (one hop): its ``BEGIN … COMMIT`` can never interleave with another
coroutine's, and a cancelled caller never leaves a transaction open.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from helix_agents.core import StoreUnavailableError, ValidationError

from ._config import SQLiteConfig
from ._migrations import apply_migrations, shipped_migrations

__all__ = ["Connection", "Work", "in_read", "unavailable"]

_T = TypeVar("_T")
Work = Callable[[sqlite3.Connection], _T]


def unavailable(what: str, exc: BaseException, *, landed: bool = False) -> StoreUnavailableError:
    """A driver failure as the store error callers handle."""
    return StoreUnavailableError(
        f"SQLite {what} failed: {type(exc).__name__}: {exc}", may_have_landed=landed
    )


def _rollback(db: sqlite3.Connection) -> None:
    # A failed rollback means the transaction already went with the failure.
    with contextlib.suppress(sqlite3.Error):
        db.rollback()


def in_read(db: sqlite3.Connection, work: Work[_T]) -> _T:
    """``work`` on one read snapshot (WAL readers never wait for writers)."""
    db.execute("BEGIN")
    try:
        return work(db)
    finally:
        _rollback(db)


def _read(db: sqlite3.Connection, work: Work[_T]) -> _T:
    try:
        return in_read(db, work)
    except sqlite3.Error as exc:
        raise unavailable("read", exc) from exc
    except UnicodeEncodeError as exc:
        raise _unstorable(exc) from None


def _write(db: sqlite3.Connection, work: Work[_T]) -> _T:
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise unavailable("write lock", exc) from exc
    try:
        result = work(db)
    except sqlite3.Error as exc:
        _rollback(db)
        raise unavailable("write", exc) from exc
    except UnicodeEncodeError as exc:
        _rollback(db)
        raise _unstorable(exc) from None
    except BaseException:
        _rollback(db)
        raise
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        _rollback(db)
        raise unavailable("commit", exc, landed=True) from exc
    return result


def _unstorable(exc: UnicodeEncodeError) -> ValidationError:
    """Text SQLite cannot hold: a lone surrogate has no UTF-8 form."""
    bad = exc.object[exc.start : exc.end]
    return ValidationError(f"text with a lone surrogate ({bad!r}) cannot be stored in SQLite")


class Connection:
    """The store's file opened on a thread of its own: the writer, or the reader."""

    def __init__(self, config: SQLiteConfig, *, writer: bool) -> None:
        self.config = config
        self.writer = writer
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="helix-sqlite")
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Connect; the writer also turns on WAL and migrates the schema."""
        try:
            self._db = await self._hop(self._connect)
        except sqlite3.Error as exc:
            raise unavailable(f"open of {self.config.path!r}", exc) from exc

    async def write(self, work: Work[_T]) -> _T:
        """``work`` inside ``BEGIN IMMEDIATE … COMMIT``, in one hop."""
        return await self._hop(_write, self._open(), work)

    async def read(self, work: Work[_T]) -> _T:
        """``work`` on one read snapshot, in one hop."""
        return await self._hop(_read, self._open(), work)

    async def close(self) -> None:
        """Close the connection and stop its thread."""
        db, self._db = self._db, None
        try:
            if db is not None:
                await self._hop(db.close)
        finally:
            self._thread.shutdown(wait=False)

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreUnavailableError(f"the SQLite store on {self.config.path!r} is closed")
        return self._db

    async def _hop(self, fn: Callable[..., _T], *args: object) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def _connect(self) -> sqlite3.Connection:
        config = self.config
        db = sqlite3.connect(config.path, isolation_level=None, timeout=config.busy_timeout)
        try:
            if self.writer:
                mode = _turn_on_wal(db, config.busy_timeout)
                if mode != "wal":
                    raise sqlite3.OperationalError(
                        f"the file cannot use WAL mode (journal_mode is {mode!r})"
                    )
                apply_migrations(db, config.path, shipped_migrations())
            else:
                db.execute("PRAGMA query_only = 1")
            db.execute(f"PRAGMA synchronous = {config.synchronous}")
        except BaseException:
            db.close()
            raise
        return db


def _turn_on_wal(db: sqlite3.Connection, busy_timeout: float) -> str:
    """Put the file in WAL mode (a property of the file, set by its first opener).

    Switching the journal mode needs the file to itself, and SQLite answers
    "database is locked" at once instead of calling the busy handler when two
    processes open a new file together; so retry until ``busy_timeout``.
    """
    deadline = time.monotonic() + busy_timeout
    pause = 0.001
    while True:
        mode = str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        if mode == "wal":
            return mode
        try:
            return str(db.execute("PRAGMA journal_mode = WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
