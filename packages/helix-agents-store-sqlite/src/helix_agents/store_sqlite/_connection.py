"""A ``sqlite3`` connection with a thread of its own, used in whole transactions.

Each call is one plain function of the connection, run start to end on its
thread (one hop): its ``BEGIN … COMMIT`` never interleaves with another
coroutine's, and a cancelled caller never leaves a transaction open. The hop is
a queue read by the thread and a ``call_soon_threadsafe`` back, the least a
hand-over between threads costs (an executor's future chain costs about twice).

On the writer, writes that queue while a transaction commits share the next
one (group commit, docs/backends/sqlite.md): each runs inside a ``SAVEPOINT``
of its own, so a write that raises or is refused rolls back alone, and one
``COMMIT`` (one fsync at ``synchronous=FULL``) lands the rest.
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
from dataclasses import dataclass
from typing import Any, TypeVar

from helix_agents.core import StoreUnavailableError, ValidationError
from helix_agents.core.backend import Refused
from helix_agents.core.errors import MigrationError

from ._config import SQLiteConfig
from .schema import apply_migrations, lacking_migrations, shipped_migrations

__all__ = ["BATCH", "Connection", "Work", "unavailable"]

_T = TypeVar("_T")
Work = Callable[[sqlite3.Connection], _T]

BATCH = 64
"""The most writes one transaction takes."""


def unavailable(what: str, exc: BaseException, *, landed: bool = False) -> StoreUnavailableError:
    """A driver failure as the store error callers handle."""
    return StoreUnavailableError(
        f"SQLite {what} failed: {type(exc).__name__}: {exc}", may_have_landed=landed
    )


def _error(step: str, exc: BaseException) -> BaseException:
    """What a call's caller gets for ``exc``: SQLite's failures as core's errors."""
    if isinstance(exc, sqlite3.Error):
        return unavailable(step, exc)
    if isinstance(exc, UnicodeEncodeError):  # a lone surrogate has no UTF-8 form
        bad = exc.object[exc.start : exc.end]
        return ValidationError(f"text {bad!r} (a lone surrogate) cannot be stored")
    return exc


def _read(db: sqlite3.Connection, work: Work[_T]) -> _T:
    """``work`` on the reader (it makes its own snapshot); SQLite's failures as core's."""
    try:
        return work(db)
    except (sqlite3.Error, UnicodeEncodeError) as exc:
        raise _error("read", exc) from exc


@dataclass(slots=True)
class _Write:
    """A write queued for the writer's thread; ``alone`` keeps it out of a shared
    transaction (a write that changes a PRAGMA or checkpoints the WAL after)."""

    future: asyncio.Future[Any]
    db: sqlite3.Connection
    work: Work[Any]
    alone: bool


_Call = tuple["asyncio.Future[Any]", Callable[[], Any]]
# What a caller's future gets: (the future, a result or an exception, whether it failed).
_Outcome = tuple["asyncio.Future[Any]", Any, bool]


def _commit_group(db: sqlite3.Connection, batch: list[_Write]) -> list[_Outcome]:
    """Run ``batch`` in one ``BEGIN IMMEDIATE … COMMIT``, each write in a savepoint.

    A lone write runs without a savepoint. In a batch, a write that raises or
    returns :class:`Refused` is rolled back to its savepoint
    and gets its own outcome; the others see the writes before them and are
    released. Nothing resolves before the ``COMMIT`` succeeded; if it fails, every
    write that was kept gets the failure (``may_have_landed=True``). If SQLite
    drops the whole transaction under a failing write, the writes before it fail
    (nothing of them landed) and the ones after it run in a new transaction.
    """
    if len(batch) == 1:
        return [_commit_one(db, batch[0])]
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        return [(w.future, unavailable("write lock", exc), True) for w in batch]
    outcomes: list[_Outcome] = []
    kept: list[int] = []  # the outcomes the COMMIT decides: all but the writes that raised
    for i, write in enumerate(batch):
        failed = False
        try:
            db.execute("SAVEPOINT w")
            result = write.work(db)
        except BaseException as exc:
            result, failed = _error("write", exc), True
        # A refused write wrote nothing; its snapshot shows the writes before it.
        lost = _end(db, undo=failed or isinstance(result, Refused))
        outcomes.append((write.future, result, failed))
        if not failed:
            kept.append(i)
        if lost is not None:
            for k in kept:
                outcomes[k] = (outcomes[k][0], unavailable("write", lost), True)
            rest = batch[i + 1 :]
            return outcomes + (_commit_group(db, rest) if rest else [])
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):
            db.rollback()
        for k in kept:
            outcomes[k] = (outcomes[k][0], unavailable("commit", exc, landed=True), True)
    return outcomes


def _commit_one(db: sqlite3.Connection, write: _Write) -> _Outcome:
    """A write alone in its transaction: no savepoint, the fewest statements."""
    step = "write lock"
    try:
        db.execute("BEGIN IMMEDIATE")
        step = "write"
        try:
            result = write.work(db)
            step = "commit"
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
            raise
    except sqlite3.Error as exc:
        return write.future, unavailable(step, exc, landed=step == "commit"), True
    except BaseException as exc:
        return write.future, _error(step, exc), True
    return write.future, result, False


def _end(db: sqlite3.Connection, *, undo: bool) -> BaseException | None:
    """Release the current write's savepoint, rolled back to first if ``undo``; the
    failure if the transaction is gone (SQLite ends it itself on some errors, e.g. a
    full disk), so nothing of the batch so far will land."""
    if not db.in_transaction:
        return sqlite3.OperationalError("SQLite rolled the transaction back")
    try:
        if undo:
            db.execute("ROLLBACK TO w")
        db.execute("RELEASE w")
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):
            db.rollback()
        return exc
    return None


class Connection:
    """The store's file opened on a thread of its own: the writer, or the reader."""

    def __init__(self, config: SQLiteConfig, *, writer: bool) -> None:
        self.config = config
        self.writer = writer
        self._calls: queue.SimpleQueue[_Call | _Write | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="helix-sqlite", daemon=True).start()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Connect; the writer also turns on WAL and migrates the schema."""
        try:
            self._db = await self._hop(self._connect)
        except sqlite3.Error as exc:
            raise unavailable(f"open of {self.config.path!r}", exc) from exc

    async def run(self, work: Work[_T], *, alone: bool = False) -> _T:
        """``work`` in one hop: on the writer, inside a transaction it shares with the
        writes queued beside it (``alone``: one of its own), resolved once that
        transaction committed."""
        if self._db is None:
            raise StoreUnavailableError(f"the SQLite store on {self.config.path!r} is closed")
        if not self.writer:
            return await self._hop(_read, self._db, work)
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._calls.put(_Write(future, self._db, work, alone))
        return await future

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
        held: list[_Call | _Write | None] = []  # a call taken while gathering a batch
        while (call := held.pop() if held else self._calls.get()) is not None:
            if isinstance(call, _Write):
                _deliver(_commit_group(call.db, self._gather(call, held)))
                continue
            future, fn = call
            try:
                outcome, failed = fn(), False
            except BaseException as exc:
                outcome, failed = exc, True
            _deliver([(future, outcome, failed)])

    def _gather(self, first: _Write, held: list[_Call | _Write | None]) -> list[_Write]:
        """``first`` and the writes queued behind it (while the last transaction
        committed), up to :data:`BATCH`; the first other call is ``held`` for next."""
        batch = [first]
        while not first.alone and len(batch) < BATCH:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if not isinstance(call, _Write) or call.alone:
                held.append(call)
                break
            batch.append(call)
        return batch

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


def _deliver(outcomes: list[_Outcome]) -> None:
    """Hand each outcome to its caller's event loop: one wake-up per loop."""
    loops: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for outcome in outcomes:
        loops.setdefault(outcome[0].get_loop(), []).append(outcome)
    for loop, mine in loops.items():
        with contextlib.suppress(RuntimeError):  # the caller's event loop is closed
            loop.call_soon_threadsafe(_settle, mine)


def _settle(outcomes: list[_Outcome]) -> None:
    for future, outcome, failed in outcomes:
        if not future.cancelled():  # a cancelled caller's call still ran, whole
            if failed:
                future.set_exception(outcome)
            else:
                future.set_result(outcome)


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
