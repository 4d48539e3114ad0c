"""The engine's connections: the pool, one statement per call within a deadline, errors
wrapped, prepared statements through psycopg's public ``prepare`` argument."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from helix_agents.core import StateStoreError, StoreUnavailableError

from ._config import PoolSettings
from ._connect import ConnectWatch, OwnConnection, make_pool, probe, within
from ._conninfo import Target
from ._errors import connect_error, logger, timeout_error, wrap_driver_error

__all__ = ["Connections", "Row"]

_T = TypeVar("_T")
Row = tuple[Any, ...]

# The server (or a pooler in front of it) refuses a prepared statement: unknown name, name taken.
_REFUSED = frozenset({"26000", "42P05"})
# "cached plan must not change result type": a prepared statement outlived a schema change.
_STALE_PLAN = "0A000"


class Connections:
    """A pool (the store's own, built from ``target``, or an application's) and the one
    way the engine uses it: :meth:`rows`, one statement in autocommit, one round trip.

    There is no lock in the client: operations on different sessions run
    concurrently, and writers of one session are serialised by its row lock.
    """

    def __init__(
        self,
        target: Target | None,
        pool: AsyncConnectionPool[Any] | None,
        settings: PoolSettings,
        operation_timeout: float,
        prepare: str,
    ) -> None:
        self.target = target
        self.settings = settings
        self.operation_timeout = operation_timeout
        self.preparing = prepare == "on" or (prepare == "auto" and pool is None)
        self.watch = ConnectWatch()
        self.owns_pool = pool is None
        if pool is None:
            assert target is not None
            pool = make_pool(target, settings, self.watch, prepare=self.preparing)
        self.pool: AsyncConnectionPool[Any] = pool

    async def open(self) -> None:
        """Connect once (a refusal surfaces now, with its reason), then open the own pool."""
        if self.target is not None:
            await probe(self.target, self.settings)
            await self.pool.open(wait=True, timeout=self.pool.timeout)

    async def close(self) -> None:
        """Close the pool if it is the store's own; an application's stays open."""
        if self.owns_pool:
            await self.pool.close()

    def wrap(
        self, exc: psycopg.Error, what: str, session_id: str | None, sent: bool, broken: bool
    ) -> StateStoreError:
        """The store error for a driver error; waiting in vain for a connection says why."""
        if isinstance(exc, PoolTimeout) and self.target is not None and self.watch.reason:
            return connect_error(
                shown=self.target.shown,
                reason=f"{self.watch.reason} (no connection in time: {exc})",
                refused=self.watch.refused,
                what=what,
                session_id=session_id,
            )
        return wrap_driver_error(
            exc, what=what, session_id=session_id, sent_write=sent, broken=broken
        )

    def _deadline(self) -> float:
        return asyncio.get_running_loop().time() + self.operation_timeout

    @staticmethod
    def _left(deadline: float) -> float:
        return max(0.0, deadline - asyncio.get_running_loop().time())

    def _timeout(self, what: str, session_id: str | None, write: bool) -> StoreUnavailableError:
        return timeout_error(
            what=what,
            session_id=session_id,
            timeout=self.operation_timeout,
            may_have_landed=write,
        )

    async def on_connection(
        self, what: str, work: Callable[[AsyncConnection[Any]], Awaitable[_T]], write: bool
    ) -> _T:
        """``work`` on one pool connection in autocommit (migrations), bounded, errors wrapped."""
        deadline = self._deadline()

        async def run(conn: AsyncConnection[Any]) -> _T:
            async with _autocommit(conn):
                return await work(conn)

        try:
            async with self.pool.connection(timeout=self._left(deadline)) as conn:
                return await within(conn, run(conn), deadline)
        except TimeoutError as exc:
            raise self._timeout(what, None, write) from exc
        except psycopg.Error as exc:
            raise self.wrap(exc, what, None, False, True) from exc

    async def rows(
        self, query: bytes, params: Sequence[Any], what: str, session_id: str | None, write: bool
    ) -> list[Row]:
        """Run one statement (one round trip) and return its rows, within ``operation_timeout``.

        A read that finds its connection dead (a server restart, a killed
        backend) is retried once on another; a write is not, since it may
        have landed: the caller gets ``may_have_landed=True``. So does a write
        that had no answer in time. A prepared statement the server refused
        (it did not run) is retried once unprepared, and one whose plan a
        migration made stale once on another connection.
        """
        deadline = self._deadline()
        for attempt in (1, 2):
            conn: AsyncConnection[Any] | None = None
            prepare = self.preparing
            try:
                # getconn/putconn, not connection(): the connection's own context would
                # only commit an autocommit connection (a no-op) and cost CPU on every call.
                conn = await self.pool.getconn(timeout=self._left(deadline))
                try:
                    if prepare and not self.owns_pool:
                        prepare = conn.prepare_threshold is not None  # else psycopg prepares none
                    return await within(conn, _execute(conn, query, params, prepare), deadline)
                except psycopg.Error as exc:
                    if prepare and exc.sqlstate == _STALE_PLAN:
                        await conn.close()  # its plans are stale: the pool discards it
                    raise
                finally:
                    await self.pool.putconn(conn)
            except TimeoutError as exc:
                raise self._timeout(what, session_id, write) from exc
            except psycopg.Error as exc:
                if prepare and attempt == 1 and exc.sqlstate in _REFUSED:
                    self._stop_preparing(exc)
                    continue
                if prepare and attempt == 1 and exc.sqlstate == _STALE_PLAN:
                    logger.info("%s on session %r: stale prepared plan, retrying", what, session_id)
                    continue
                broken = conn is not None and conn.broken
                if broken and not write and attempt == 1:
                    logger.info("%s on %r: connection lost, retrying: %s", what, session_id, exc)
                    continue
                raise self.wrap(exc, what, session_id, write and conn is not None, broken) from exc
        raise AssertionError("unreachable")

    def _stop_preparing(self, exc: psycopg.Error) -> None:
        if self.preparing:
            self.preparing = False
            logger.warning(
                "PostgreSQL refused a prepared statement (%s: %s): the store prepares no more "
                "statements (behind PgBouncer before 1.21 in transaction mode, set prepare=off)",
                exc.sqlstate,
                exc,
            )


async def _execute(
    conn: AsyncConnection[Any], query: bytes, params: Sequence[Any], prepare: bool
) -> list[Row]:
    if isinstance(conn, OwnConnection) and conn.autocommit:
        cur = conn.store_cursor()
        await cur.execute(query, params, prepare=prepare)
        return await cur.fetchall()
    # One statement in autocommit is its own transaction: no BEGIN/COMMIT round trips.
    if not conn.autocommit:
        async with _autocommit(conn):
            return await _execute(conn, query, params, prepare)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params, prepare=prepare)
        return await cur.fetchall()


@asynccontextmanager
async def _autocommit(conn: AsyncConnection[Any]) -> AsyncIterator[None]:
    """Autocommit for the block; an application's non-autocommit connection is switched back."""
    restore = not conn.autocommit
    if restore:
        await conn.set_autocommit(True)
    try:
        yield
    finally:
        if restore and not conn.closed:
            await conn.set_autocommit(False)
