"""The store's connections, lifecycle and one-statement helpers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import (
    SessionNotFoundError,
    StoreUnavailableError,
    ValidationError,
    check_limit,
)

from ._config import PoolSettings, make_pool, valid_schema
from ._errors import MigrationError, logger, wrap_driver_error
from ._migrations import check_applied, migrate, read_applied
from ._sql import Statements

__all__ = ["StoreBase", "big"]

_T = TypeVar("_T")
Params = Sequence[Any] | Mapping[str, Any]
Row = tuple[Any, ...]


def big(value: int) -> int:
    """``value``, capped to fit a bigint (anything this large is refused anyway)."""
    return min(value, 2**62)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class StoreBase:
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
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        if (conninfo is None) == (pool is None):
            raise ValidationError(
                "give PostgresStateStore exactly one of a conninfo (URL) and a pool"
            )
        if max_messages is not None:
            check_limit(None, "max_messages", max_messages, 1, 2**62)
        self.schema = valid_schema(schema)
        self.max_messages = max_messages
        self.auto_migrate = auto_migrate
        self._owns_pool = pool is None
        self._pool: AsyncConnectionPool[Any] = (
            pool if pool is not None else make_pool(str(conninfo), pool_settings or PoolSettings())
        )
        self._sql = Statements.for_schema(self.schema)
        self._clock = clock
        self._closed = False

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        """The connection pool (the store's own, or the one the application passed)."""
        return self._pool

    async def __aenter__(self) -> Self:
        self._ensure_open("open", None)
        try:
            if self._owns_pool:
                await self._pool.open(wait=True, timeout=self._pool.timeout)
            if self.auto_migrate:
                await self.migrate()
            else:
                await self.check_schema()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, psycopg.Error):
                raise wrap_driver_error(
                    exc, what="opening the store", session_id=None, sent_write=False, broken=True
                ) from exc
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

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
        async with self._connection("migrate") as conn:
            return await migrate(conn, self.schema)

    async def check_schema(self) -> None:
        """Raise :class:`MigrationError` unless the schema is exactly at this package's version."""
        async with (
            self._connection("check_schema") as conn,
            conn.cursor(row_factory=tuple_row) as cur,
        ):
            try:
                applied = await read_applied(cur, self.schema)
            except psycopg.Error as exc:
                raise wrap_driver_error(
                    exc, what="check_schema", session_id=None, sent_write=False, broken=conn.broken
                ) from exc
        pending = check_applied(self.schema, applied)
        if pending:
            raise MigrationError(
                f"schema {self.schema!r} lacks migrations "
                f"{', '.join(m.name for m in pending)}: run `await store.migrate()` "
                f"or open the store with auto_migrate=True"
            )

    # Helpers

    def _ensure_open(self, what: str, session_id: str | None) -> None:
        if self._closed:
            where = "" if session_id is None else f"session {session_id!r}: "
            raise StoreUnavailableError(
                f"{where}{what}: the store is closed", session_id=session_id
            )

    @asynccontextmanager
    async def _connection(self, what: str) -> AsyncIterator[AsyncConnection[Any]]:
        """A pool connection for several statements (migrations), driver errors wrapped."""
        self._ensure_open(what, None)
        try:
            async with self._pool.connection() as conn, _autocommit(conn):
                yield conn
        except psycopg.Error as exc:
            raise wrap_driver_error(
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
        """Run one statement (one round trip) and return its rows.

        A read that finds its connection dead (a server restart, a killed
        backend) is retried once on another; a write is not, since it may
        have landed: the caller gets ``may_have_landed=True``.
        """
        self._ensure_open(what, session_id)
        for attempt in (1, 2):
            conn: AsyncConnection[Any] | None = None
            try:
                async with self._pool.connection() as conn:
                    return await _execute(conn, query, params)
            except psycopg.Error as exc:
                broken = conn is not None and conn.broken
                if broken and not write and attempt == 1:
                    logger.info(
                        "%s on session %r: connection lost, retrying: %s", what, session_id, exc
                    )
                    continue
                raise wrap_driver_error(
                    exc,
                    what=what,
                    session_id=session_id,
                    sent_write=write and conn is not None,
                    broken=broken,
                ) from exc
        raise AssertionError("unreachable")

    async def _call(self, query: bytes, params: Params, *, what: str, session_id: str) -> Any:
        """Call a server-side write function; return its JSON result."""
        rows = await self._rows(query, params, what=what, session_id=session_id, write=True)
        return json.loads(rows[0][0])

    async def _counts(self, session_id: str, what: str) -> tuple[int, int, int]:
        """``(message_count, ui_count, first_index)``; :class:`SessionNotFoundError` if missing."""
        rows = await self._rows(self._sql.counts, (session_id,), what=what, session_id=session_id)
        if not rows:
            raise SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)
        count, ui, first = rows[0]
        return int(count), int(ui), int(first)

    async def _session_rows(
        self, query: bytes, params: Params, session_id: str, what: str
    ) -> list[Row]:
        """Rows of a read that leads with the session row; no row means no session."""
        rows = await self._rows(query, params, what=what, session_id=session_id)
        if not rows:
            raise SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)
        return rows

    async def _checked(self, session_id: str, what: str, check: Callable[[], _T]) -> _T:
        """``check()``; if it refuses the input, a missing session is reported first (SPEC §5)."""
        self._ensure_open(what, session_id)
        try:
            return check()
        except ValidationError:
            await self._counts(session_id, what)
            raise


async def _execute(conn: AsyncConnection[Any], query: bytes, params: Params) -> list[Row]:
    # One statement in autocommit is its own transaction: no BEGIN/COMMIT round trips.
    if not conn.autocommit:
        async with _autocommit(conn):
            return await _execute(conn, query, params)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params, prepare=False)
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
