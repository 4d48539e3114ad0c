"""A ``sqlite3`` connection with a thread of its own, used in whole transactions.

Each call is one plain function of the connection, run start to end on its
thread (one hop): its ``BEGIN … COMMIT`` never interleaves with another
coroutine's, and a cancelled caller never leaves a transaction open. The hop is
a queue read by the thread and a ``call_soon_threadsafe`` back, the least a
hand-over between threads costs (an executor's future chain costs about twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from helix_agents.core import StoreUnavailableError, ValidationError
from helix_agents.core.errors import MigrationError

from ._config import SQLiteConfig
from .schema import apply_migrations, lacking_migrations, shipped_migrations

__all__ = ["Connection", "Work", "unavailable"]

_T = TypeVar("_T")
Work = Callable[[sqlite3.Connection], _T]


def unavailable(what: str, exc: BaseException, *, landed: bool = False) -> StoreUnavailableError:
    """A driver failure as the store error callers handle."""
    return StoreUnavailableError(
        f"SQLite {what} failed: {type(exc).__name__}: {exc}", may_have_landed=landed
    )


def _run(db: sqlite3.Connection, work: Work[_T], write: bool) -> _T:
    """``work``, inside ``BEGIN IMMEDIATE … COMMIT`` if it writes (a read makes its own
    snapshot); SQLite's failures as core's errors."""
    step = "write lock" if write else "read"
    try:
        if not write:
            return work(db)
        db.execute("BEGIN IMMEDIATE")
        step = "write"
        try:
            result = work(db)
            step = "commit"
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            raise
        return result
    except sqlite3.Error as exc:
        raise unavailable(step, exc, landed=step == "commit") from exc
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        bad = exc.object[exc.start : exc.end]
        raise ValidationError(f"text {bad!r} (a lone surrogate) cannot be stored") from None


class Connection:
    """The store's file opened on a thread of its own: the writer, or the reader."""

    def __init__(self, config: SQLiteConfig, *, writer: bool) -> None:
        self.config = config
        self.writer = writer
        self._calls: queue.SimpleQueue[tuple[asyncio.Future[Any], Callable[[], Any]] | None]
        self._calls = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="helix-sqlite", daemon=True).start()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Connect; the writer also turns on WAL and migrates the schema."""
        try:
            self._db = await self._hop(self._connect)
        except sqlite3.Error as exc:
            raise unavailable(f"open of {self.config.path!r}", exc) from exc

    async def run(self, work: Work[_T]) -> _T:
        """``work`` in one hop (a transaction of its own on the writer)."""
        if self._db is None:
            raise StoreUnavailableError(f"the SQLite store on {self.config.path!r} is closed")
        return await self._hop(_run, self._db, work, self.writer)

    async def checkpoint(self) -> None:
        """Copy the WAL into the file and empty it (``wal_checkpoint(TRUNCATE)``), so page
        images a redaction replaced are gone from both (RED-6). A reader still on an older
        snapshot can keep frames for the next checkpoint: SQLite's own rule."""
        if self._db is None:
            raise StoreUnavailableError(f"the SQLite store on {self.config.path!r} is closed")
        try:
            await self._hop(_checkpoint, self._db)
        except sqlite3.Error as exc:
            raise unavailable("checkpoint", exc, landed=True) from exc

    async def close(self) -> None:
        """Close the connection and stop its thread."""
        db, self._db = self._db, None
        try:
            if db is not None:
                await self._hop(db.close)
        finally:
            self._calls.put(None)  # the thread ends

    async def _hop(self, fn: Callable[..., _T], *args: object) -> _T:
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._calls.put((future, lambda: fn(*args)))
        return await future

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            future, fn = call
            try:
                done, outcome = future.set_result, fn()
            except BaseException as exc:
                done, outcome = future.set_exception, exc
            with contextlib.suppress(RuntimeError):  # the caller's event loop is closed
                future.get_loop().call_soon_threadsafe(_settle, future, done, outcome)

    def _connect(self) -> sqlite3.Connection:
        config = self.config
        if config.read_only and not os.path.isfile(config.path):
            raise ValidationError(
                f"no such database file {config.path!r}: a read-only SQLite store "
                f"(mode=ro) opens an existing file only"
            )
        database, uri = config.database()
        db = sqlite3.connect(database, isolation_level=None, timeout=config.busy_timeout, uri=uri)
        try:
            if config.read_only:
                _check_read_only(db, config.path)
            if self.writer:
                mode = _turn_on_wal(db, config.busy_timeout)
                if mode != "wal":
                    raise sqlite3.OperationalError(f"the file cannot use WAL (journal_mode {mode})")
                apply_migrations(db, config.path, shipped_migrations())
            else:
                db.execute("PRAGMA query_only = 1")
            db.execute(f"PRAGMA synchronous = {config.synchronous}")
        except BaseException:
            db.close()
            raise
        return db


def _check_read_only(db: sqlite3.Connection, path: str) -> None:
    """A read-only store cannot migrate: the file must have every shipped migration."""
    lacking = lacking_migrations(db, path)
    if lacking:
        raise MigrationError(
            f"SQLite database {path!r} lacks migrations {', '.join(lacking)}: "
            f"a read-only store (mode=ro) cannot apply them"
        )


def _settle(future: asyncio.Future[Any], done: Callable[[Any], None], outcome: Any) -> None:
    if not future.cancelled():  # a cancelled caller's call still ran, whole
        done(outcome)


def _turn_on_wal(db: sqlite3.Connection, busy_timeout: float) -> str:
    """Put the file in WAL mode (a property of the file, set by its first opener).

    Switching needs the file to itself, and SQLite answers "database is locked" at
    once instead of calling the busy handler when two processes open a new file
    together; so retry until ``busy_timeout``.
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


def _checkpoint(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
