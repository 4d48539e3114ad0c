"""The store's connections, lifecycle and one-statement helpers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Self, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from helix_agents.core import StateStoreError, StoreUnavailableError, ValidationError
from helix_agents.core.backend import ClosesOnExit, check_id
from helix_agents.core.clock import check_clock, utcnow
from helix_agents.core.errors import session_not_found
from helix_agents.core.limits import MAX_COUNT

from ._config import (
    DEFAULT_OPERATION_TIMEOUT,
    PoolSettings,
    check_prepare,
    count,
    seconds,
    valid_schema,
)
from ._connect import ConnectWatch, OwnConnection, make_pool, probe, within
from ._conninfo import Target
from ._errors import MigrationError, connect_error, logger, timeout_error, wrap_driver_error
from ._migrations import check_applied, migrate, read_applied, read_functions, stale_functions
from ._sql import Statements

__all__ = ["StoreBase", "big"]

_T = TypeVar("_T")
Params = Sequence[Any] | Mapping[str, Any]
Row = tuple[Any, ...]

# The server (or a pooler in front of it) refuses a prepared statement: unknown name, name taken.
_REFUSED = frozenset({"26000", "42P05"})
# "cached plan must not change result type": a prepared statement outlived a schema change.
_STALE_PLAN = "0A000"


def big(value: int) -> int:
    """``value``, capped to fit a bigint (anything this large is refused anyway)."""
    return min(value, MAX_COUNT)


class StoreBase(ClosesOnExit):
    """Connections, lifecycle and the helpers every operation of the store uses.

    There is no lock in the client: each operation borrows a pool connection
    for one statement, so operations on different sessions run concurrently
    and writers of one session are serialised by the session row lock in the
    database.
    """

    def __init__(
        self,
        conninfo: str | None = None,
        *,
        pool: AsyncConnectionPool[Any] | None = None,
        schema: str = "public",
        max_messages: int | None = None,
        auto_migrate: bool = False,
        pool_settings: PoolSettings | None = None,
        operation_timeout: float = DEFAULT_OPERATION_TIMEOUT,
        clock: Callable[[], datetime] = utcnow,
        prepare: str = "auto",
    ) -> None:
        if (conninfo is None) == (pool is None):
            raise ValidationError(
                "give PostgresStateStore exactly one of a conninfo (URL) and a pool"
            )
        if max_messages is not None:
            count("max_messages", max_messages, 1, MAX_COUNT)
        if not isinstance(auto_migrate, bool):
            raise ValidationError(f"option auto_migrate={auto_migrate!r} must be a boolean")
        if pool_settings is not None and not isinstance(pool_settings, PoolSettings):
            raise ValidationError(f"pool_settings must be a PoolSettings, not {pool_settings!r}")
        self._clock = check_clock(clock)
        self.schema = valid_schema(schema)
        self.max_messages = max_messages
        self.auto_migrate = auto_migrate
        self.operation_timeout = seconds("operation_timeout", operation_timeout)
        self._settings = pool_settings or PoolSettings()
        self.prepare = check_prepare(prepare)
        self._preparing = self.prepare == "on" or (self.prepare == "auto" and pool is None)
        self._target: Target | None = None
        self._watch = ConnectWatch()
        self._pool: AsyncConnectionPool[Any]
        if pool is None:
            self._target = Target.parse(conninfo)
            self._pool = make_pool(
                self._target, self._settings, self._watch, prepare=self._preparing
            )
        else:
            self._pool = pool
        self._owns_pool = pool is None
        self._sql = Statements.for_schema(self.schema)
        self._closed = False

    def __repr__(self) -> str:
        where = f"pool={self._pool.name!r}" if self._target is None else repr(self._target.shown)
        return f"{type(self).__name__}({where}, schema={self.schema!r})"

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        """The connection pool (the store's own, or the one the application passed)."""
        return self._pool

    @property
    def prepared_statements(self) -> bool:
        """Whether the store now prepares its statements on the server (see ``prepare``).

        It stops for good, with one warning, when the server or a pooler in
        front of it refuses a prepared statement.
        """
        return self._preparing

    async def __aenter__(self) -> Self:
        if self._closed:
            raise StoreUnavailableError("open: the store is closed")
        try:
            if self._target is not None:
                await probe(self._target, self._settings)
                await self._pool.open(wait=True, timeout=self._pool.timeout)
            if self.auto_migrate:
                await self.migrate()
            else:
                await self.check_schema()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, psycopg.Error):
                raise self._wrap(
                    exc, what="opening the store", session_id=None, sent_write=False, broken=True
                ) from exc
            raise
        return self

    async def close(self) -> None:
        """Close the pool if the store opened it; an application's pool stays open."""
        if self._closed:
            return
        self._closed = True
        if self._owns_pool:
            await self._pool.close()

    async def migrate(self) -> list[int]:
        """Apply the pending migrations to the store's schema; return their versions.

        Safe to run from many processes at once (an advisory lock serialises them).
        """
        return await self._on_connection(
            "migrate", lambda conn: migrate(conn, self.schema), write=True
        )

    async def check_schema(self) -> None:
        """Raise :class:`MigrationError` unless the schema is exactly at this package's version."""

        async def read(
            conn: AsyncConnection[Any],
        ) -> tuple[list[tuple[int, str, str]], dict[str, str] | None]:
            async with conn.cursor(row_factory=tuple_row) as cur:
                return await read_applied(cur, self.schema), await read_functions(cur, self.schema)

        applied, functions = await self._on_connection("check_schema", read)
        lacking = [m.name for m in check_applied(self.schema, applied)]
        lacking += [f"functions/{f.name}" for f in stale_functions(functions)]
        if lacking:
            raise MigrationError(
                f"schema {self.schema!r} lacks migrations "
                f"{', '.join(lacking)}: run `await store.migrate()` "
                f"or open the store with auto_migrate=True"
            )

    # Helpers

    def _ensure_open(self, what: str, session_id: object) -> None:
        """Refuse a closed store, or one whose pool is not open, before any argument is
        looked at (INP-5, INP-7)."""
        if self._closed or self._pool.closed:
            sid = session_id if isinstance(session_id, str) else None
            where = "" if sid is None else f"session {sid!r}: "
            if self._closed:
                why = "the store is closed"
            elif self._owns_pool:
                why = "the store is not open: use 'async with'"
            else:
                why = f"the application's pool {self._pool.name!r} is not open"
            raise StoreUnavailableError(f"{where}{what}: {why}", session_id=sid)

    def _open_session(self, what: str, session_id: str) -> None:
        """The store is open, then the session id is well formed."""
        self._ensure_open(what, session_id)
        check_id(session_id, "session_id")

    def _wrap(
        self,
        exc: psycopg.Error,
        *,
        what: str,
        session_id: str | None,
        sent_write: bool,
        broken: bool,
    ) -> StateStoreError:
        """The store error for a driver error; waiting in vain for a connection says why."""
        if isinstance(exc, PoolTimeout) and self._target is not None and self._watch.reason:
            return connect_error(
                shown=self._target.shown,
                reason=f"{self._watch.reason} (no connection in time: {exc})",
                refused=self._watch.refused,
                what=what,
                session_id=session_id,
            )
        return wrap_driver_error(
            exc, what=what, session_id=session_id, sent_write=sent_write, broken=broken
        )

    def _deadline(self) -> float:
        return asyncio.get_running_loop().time() + self.operation_timeout

    @staticmethod
    def _left(deadline: float) -> float:
        return max(0.0, deadline - asyncio.get_running_loop().time())

    async def _on_connection(
        self,
        what: str,
        work: Callable[[AsyncConnection[Any]], Awaitable[_T]],
        *,
        write: bool = False,
    ) -> _T:
        """``work`` on one pool connection in autocommit (migrations), bounded, errors wrapped."""
        self._ensure_open(what, None)
        deadline = self._deadline()

        async def run(conn: AsyncConnection[Any]) -> _T:
            async with _autocommit(conn):
                return await work(conn)

        try:
            async with self._pool.connection(timeout=self._left(deadline)) as conn:
                return await within(conn, run(conn), deadline)
        except TimeoutError as exc:
            raise timeout_error(
                what=what, session_id=None, timeout=self.operation_timeout, may_have_landed=write
            ) from exc
        except psycopg.Error as exc:
            raise self._wrap(
                exc, what=what, session_id=None, sent_write=False, broken=True
            ) from exc

    async def _rows(
        self,
        query: bytes,
        params: Params,
        *,
        what: str,
        session_id: str | None,
        write: bool = False,
    ) -> list[Row]:
        """Run one statement (one round trip) and return its rows, within ``operation_timeout``.

        A read that finds its connection dead (a server restart, a killed
        backend) is retried once on another; a write is not, since it may
        have landed: the caller gets ``may_have_landed=True``. So does a write
        that had no answer in time. A prepared statement the server refused
        (it did not run) is retried once unprepared, and one whose plan a
        migration made stale once on another connection.
        """
        self._ensure_open(what, session_id)
        deadline = self._deadline()
        for attempt in (1, 2):
            conn: AsyncConnection[Any] | None = None
            prepare = self._preparing
            try:
                # getconn/putconn, not connection(): the connection's own context would
                # only commit an autocommit connection (a no-op) and cost CPU on every call.
                conn = await self._pool.getconn(timeout=self._left(deadline))
                try:
                    if prepare and not self._owns_pool:
                        prepare = conn.prepare_threshold is not None  # else psycopg prepares none
                    return await within(conn, _execute(conn, query, params, prepare), deadline)
                except psycopg.Error as exc:
                    if prepare and exc.sqlstate == _STALE_PLAN:
                        await conn.close()  # its plans are stale: the pool discards it
                    raise
                finally:
                    await self._pool.putconn(conn)
            except TimeoutError as exc:
                raise timeout_error(
                    what=what,
                    session_id=session_id,
                    timeout=self.operation_timeout,
                    may_have_landed=write,
                ) from exc
            except psycopg.Error as exc:
                if prepare and attempt == 1 and exc.sqlstate in _REFUSED:
                    self._stop_preparing(exc)
                    continue
                if prepare and attempt == 1 and exc.sqlstate == _STALE_PLAN:
                    logger.info("%s on session %r: stale prepared plan, retrying", what, session_id)
                    continue
                broken = conn is not None and conn.broken
                if broken and not write and attempt == 1:
                    logger.info(
                        "%s on session %r: connection lost, retrying: %s", what, session_id, exc
                    )
                    continue
                raise self._wrap(
                    exc,
                    what=what,
                    session_id=session_id,
                    sent_write=write and conn is not None,
                    broken=broken,
                ) from exc
        raise AssertionError("unreachable")

    def _stop_preparing(self, exc: psycopg.Error) -> None:
        if self._preparing:
            self._preparing = False
            logger.warning(
                "PostgreSQL refused a prepared statement (%s: %s): the store prepares no more "
                "statements (behind PgBouncer before 1.21 in transaction mode, set prepare=off)",
                exc.sqlstate,
                exc,
            )

    async def _call(self, query: bytes, params: Params, *, what: str, session_id: str) -> Any:
        """Call a server-side write function; return its JSON result."""
        rows = await self._rows(query, params, what=what, session_id=session_id, write=True)
        return json.loads(rows[0][0])

    async def _counts(self, session_id: str, what: str) -> tuple[int, int, int]:
        """``(message_count, ui_count, first_index)``; :class:`SessionNotFoundError` if missing."""
        rows = await self._rows(self._sql.counts, (session_id,), what=what, session_id=session_id)
        if not rows:
            raise session_not_found(session_id)
        count, ui, first = rows[0]
        return int(count), int(ui), int(first)

    async def _session_rows(
        self, query: bytes, params: Params, session_id: str, what: str
    ) -> list[Row]:
        """Rows of a read that leads with the session row; no row means no session."""
        rows = await self._rows(query, params, what=what, session_id=session_id)
        if not rows:
            raise session_not_found(session_id)
        return rows

    async def _checked(self, session_id: str, what: str, check: Callable[[], _T]) -> _T:
        """``check()`` after the store and the session id; if it refuses the input, a missing
        session is reported first (docs/commit.md)."""
        self._open_session(what, session_id)
        try:
            return check()
        except ValidationError:
            await self._counts(session_id, what)
            raise


async def _execute(
    conn: AsyncConnection[Any], query: bytes, params: Params, prepare: bool
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
