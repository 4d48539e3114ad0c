"""One aiosqlite connection, used in whole transactions of one hop each.

aiosqlite runs every call on the connection's own thread, one at a time. A
store operation is one plain function of the ``sqlite3`` connection, queued
as a single call: its ``BEGIN … COMMIT`` runs start to end on that thread, so
two coroutines never interleave inside one transaction, and a commit costs one
hop instead of one per statement.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import aiosqlite

from helix_agents.core import StoreUnavailableError, ValidationError

from ._config import SQLiteConfig
from ._context import register_functions
from ._migrations import apply_migrations, shipped_migrations

__all__ = ["Database", "unavailable", "unstorable"]

_T = TypeVar("_T")
Work = Callable[[sqlite3.Connection], _T]


def unavailable(
    what: str, exc: BaseException, *, session_id: str | None = None, may_have_landed: bool = False
) -> StoreUnavailableError:
    """A driver failure as the store error callers handle."""
    where = "" if session_id is None else f"session {session_id!r}: "
    return StoreUnavailableError(
        f"{where}SQLite {what} failed: {type(exc).__name__}: {exc}",
        session_id=session_id,
        may_have_landed=may_have_landed,
    )


def unstorable(exc: UnicodeEncodeError, session_id: str | None) -> ValidationError:
    """Text SQLite cannot hold: a lone surrogate has no UTF-8 form."""
    return ValidationError(
        f"session {session_id!r}: text with a lone surrogate ({exc.object[exc.start : exc.end]!r}) "
        f"cannot be stored in SQLite",
        session_id=session_id,
    )


def _rollback(db: sqlite3.Connection) -> None:
    # A failed rollback means the transaction already went with the failure.
    with contextlib.suppress(sqlite3.Error):
        db.rollback()


def _write(db: sqlite3.Connection, work: Work[_T], session_id: str | None) -> _T:
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise unavailable("write lock", exc, session_id=session_id) from exc
    try:
        result = work(db)
    except sqlite3.Error as exc:
        _rollback(db)
        raise unavailable("write", exc, session_id=session_id) from exc
    except UnicodeEncodeError as exc:
        _rollback(db)
        raise unstorable(exc, session_id) from None
    except BaseException:
        _rollback(db)
        raise
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        _rollback(db)
        raise unavailable("commit", exc, session_id=session_id, may_have_landed=True) from exc
    return result


def _read(db: sqlite3.Connection, work: Work[_T], session_id: str | None) -> _T:
    try:
        # One snapshot for every statement of the read; WAL readers never block writers.
        db.execute("BEGIN")
        try:
            return work(db)
        finally:
            _rollback(db)
    except sqlite3.Error as exc:
        raise unavailable("read", exc, session_id=session_id) from exc
    except UnicodeEncodeError as exc:
        raise unstorable(exc, session_id) from None


def _query(db: sqlite3.Connection, work: Work[_T], session_id: str | None) -> _T:
    try:
        return work(db)
    except sqlite3.Error as exc:
        raise unavailable("read", exc, session_id=session_id) from exc
    except UnicodeEncodeError as exc:
        raise unstorable(exc, session_id) from None


class Database:
    """A connection to the store's file, with a thread of its own."""

    def __init__(self, conn: aiosqlite.Connection, path: str) -> None:
        self._conn = conn
        self.path = path
        self._open = True
        # aiosqlite has no public call for running a function on its thread;
        # ``_execute(fn, *args)`` is that call in the range pyproject.toml pins (0.22.x).
        self._execute = cast(Callable[..., Awaitable[Any]], conn._execute)

    @classmethod
    async def connect(cls, config: SQLiteConfig, *, writer: bool) -> Database:
        """Open the file; the writer also turns on WAL and migrates the schema."""
        conn = aiosqlite.connect(config.path, isolation_level=None, timeout=config.busy_timeout)
        try:
            await conn
        except sqlite3.Error as exc:
            # aiosqlite stops the thread without awaiting it; let it finish while the
            # event loop still runs, or it reports to a closed loop.
            await asyncio.to_thread(conn._thread.join)
            raise unavailable(f"open of {config.path!r}", exc) from exc
        db = cls(conn, config.path)
        try:
            await db._execute(_setup, conn._conn, config, writer)
        except BaseException:
            await db.close()
            raise
        return db

    async def write(self, work: Work[_T], session_id: str | None = None) -> _T:
        """Run ``work`` inside ``BEGIN IMMEDIATE … COMMIT``, in one hop."""
        return cast(_T, await self._call(_write, work, session_id))

    async def read(self, work: Work[_T], session_id: str | None = None) -> _T:
        """Run ``work`` on one read snapshot, in one hop."""
        return cast(_T, await self._call(_read, work, session_id))

    async def query(self, work: Work[_T], session_id: str | None = None) -> _T:
        """Run ``work``, which reads with ONE statement, in one hop.

        A lone statement is its own snapshot (autocommit runs it in an implicit
        read transaction), so this saves the ``BEGIN`` and ``ROLLBACK`` of :meth:`read`.
        """
        return cast(_T, await self._call(_query, work, session_id))

    async def _call(
        self, runner: Callable[..., Any], work: Work[Any], session_id: str | None
    ) -> Any:
        if not self._open:
            raise StoreUnavailableError(
                f"the SQLite store on {self.path!r} is closed", session_id=session_id
            )
        return await self._execute(runner, self._conn._conn, work, session_id)

    async def close(self) -> None:
        """Close the connection and stop its thread."""
        if not self._open:
            return
        self._open = False
        try:
            await self._conn.close()
        except sqlite3.Error as exc:
            raise unavailable(f"close of {self.path!r}", exc) from exc


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


def _setup(db: sqlite3.Connection, config: SQLiteConfig, writer: bool) -> None:
    try:
        db.execute(f"PRAGMA busy_timeout = {int(config.busy_timeout * 1000)}")
        register_functions(db)
        if writer:
            mode = _turn_on_wal(db, config.busy_timeout)
            if mode != "wal":
                raise sqlite3.OperationalError(
                    f"the file cannot use WAL mode (journal_mode is {mode!r})"
                )
            apply_migrations(db, config.path, shipped_migrations())
        else:
            db.execute("PRAGMA query_only = 1")
        db.execute(f"PRAGMA synchronous = {config.synchronous}")
    except sqlite3.Error as exc:
        raise unavailable(f"open of {config.path!r}", exc) from exc
