"""Connections with bounded waits: the pool, the first connect, the deadline of a call."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Self, TypeVar

import psycopg
from psycopg import AsyncConnection, AsyncCursor
from psycopg.conninfo import make_conninfo
from psycopg.rows import TupleRow, tuple_row
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import StateStoreError

from ._config import PoolSettings
from ._conninfo import Target
from ._errors import connect_error, logger
from ._startup import refusal, tls_answer

__all__ = ["ConnectWatch", "OwnConnection", "make_pool", "probe", "sever", "within"]

_T = TypeVar("_T")
_INTERRUPTS = (asyncio.CancelledError, KeyboardInterrupt, SystemExit)
_ANSWER_WAIT = 2.0  # seconds a refused first connect waits for a server's answer to a TLS request


class ConnectWatch:
    """Why the pool's latest attempt to connect failed (secrets masked); ``None`` once one works.

    The pool retries in the background and only logs why; a call that then
    waits for a connection in vain reports this reason, and ``refused``: the
    kind of refusal retrying cannot fix, or ``None``.
    """

    __slots__ = ("reason", "refused")

    def __init__(self) -> None:
        self.reason: str | None = None
        self.refused: str | None = None


class OwnConnection(AsyncConnection[Any]):
    """A connection of the store's own pool, which keeps one cursor for all its statements.

    A new cursor per statement costs ~10 µs of client CPU (its adapters' map
    and context); the pool lends the connection to one caller at a time.
    """

    _store_cursor: AsyncCursor[TupleRow] | None = None

    def store_cursor(self) -> AsyncCursor[TupleRow]:
        """The connection's cursor of tuples, made on first use."""
        cur = self._store_cursor
        if cur is None:
            cur = self._store_cursor = self.cursor(row_factory=tuple_row)
        return cur

    async def cancel_safe(self, *, timeout: float = 30.0) -> None:  # noqa: ASYNC109 (psycopg's)
        """Sever the connection instead of asking the server, which may not answer.

        psycopg calls this when a task waiting on the connection is cancelled;
        the statement then fails at once and the pool discards the connection.
        """
        sever(self)


def _watched(target: Target, watch: ConnectWatch) -> type[OwnConnection]:
    class StoreConnection(OwnConnection):
        @classmethod
        async def connect(cls, conninfo: str = "", **kwargs: Any) -> Self:
            try:
                conn = await super().connect(conninfo, **kwargs)
            except psycopg.Error as exc:
                watch.reason = target.scrub(str(exc).strip())
                watch.refused = refusal(exc)
                raise
            watch.reason = None
            return conn

    StoreConnection.__qualname__ = StoreConnection.__name__  # how psycopg's logs show it
    return StoreConnection


def make_pool(
    target: Target, settings: PoolSettings, watch: ConnectWatch, *, prepare: bool
) -> AsyncConnectionPool[AsyncConnection[Any]]:
    """A closed pool of autocommit connections; without ``prepare`` they prepare nothing
    (``prepare_threshold=None``), with it psycopg's default threshold, which the store's
    statements bypass by passing ``prepare`` on every call."""
    limit = target.timeout(settings.connect_timeout)
    unprepared: dict[str, Any] = {} if prepare else {"prepare_threshold": None}
    return AsyncConnectionPool(
        target.conninfo,
        connection_class=_watched(target, watch),
        kwargs={
            "autocommit": True,
            **unprepared,
            **target.kwargs(settings.connect_timeout),
        },
        min_size=settings.min_size,
        max_size=settings.max_size,
        max_idle=settings.max_idle,
        max_lifetime=settings.max_lifetime,
        check=_checker(limit) if settings.check else None,
        timeout=settings.timeout,
        name="helix_agents.store_postgres",
        open=False,
    )


def _checker(limit: float) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
    async def check(conn: AsyncConnection[Any]) -> None:
        """An empty statement; a connection that does not answer in time is dropped."""
        deadline = asyncio.get_running_loop().time() + limit
        await within(conn, conn.execute("", prepare=False), deadline)

    return check


async def probe(target: Target, settings: PoolSettings) -> None:
    """Open one connection and close it, so that a refusal surfaces now, with its reason.

    The pool would retry a refused connection until its timeout and then only
    say ``PoolTimeout``. Raises :class:`StoreMisconfiguredError` when retrying
    cannot help (authentication, unknown database or role, TLS, not a
    PostgreSQL server), else :class:`StoreUnavailableError`.
    """
    limit = target.timeout(settings.connect_timeout)
    error: StateStoreError
    try:
        # libpq's timeout is per host and whole seconds: bound the connect to the fraction.
        async with asyncio.timeout(limit * target.hosts):
            conn = await AsyncConnection.connect(
                make_conninfo(target.conninfo, **target.kwargs(settings.connect_timeout))
            )
    except TimeoutError:
        reason = f"no connection within connect_timeout={limit:g} s"
        error = connect_error(shown=target.shown, reason=reason, refused=None)
        error.__cause__ = TimeoutError(reason)
    except psycopg.Error as exc:
        reason = target.scrub(str(exc).strip())
        refused = refusal(exc)
        if refused is None:  # ask the server itself only when its message told nothing
            refused = refusal(exc, await tls_answer(exc, min(limit, _ANSWER_WAIT)))
        error = connect_error(shown=target.shown, reason=reason, refused=refused)
        # A copy without the connection object, which holds the password, nor the traceback,
        # whose frames do.
        error.__cause__ = type(exc)(reason)
    else:
        await conn.close()
        return
    # Raised outside the handler, so the driver's exception is not the __context__ either.
    raise error


def sever(conn: AsyncConnection[Any]) -> None:
    """Shut the connection's socket down: whatever waits on it fails at once, and it is broken.

    The pool then discards it. Nothing is sent: the server may go on running
    the statement it had.
    """
    try:
        fd = conn.pgconn.socket
    except psycopg.Error:
        return  # already closed
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        logger.debug("could not shut down a connection's socket: %s", exc)


async def within(conn: AsyncConnection[Any], work: Coroutine[Any, Any, _T], deadline: float) -> _T:
    """Run ``work`` (I/O on ``conn``) until ``deadline``, a time of the event loop's clock.

    Past the deadline, or when the caller is cancelled, the connection is
    severed and closed rather than the query cancelled: psycopg cancels by
    asking the server and waiting for it, up to ten seconds with a server that
    does not answer. Raises :class:`TimeoutError` if no answer came in time.
    """
    loop = asyncio.get_running_loop()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        sever(conn)

    timer = loop.call_at(deadline, expire)
    try:
        # The store's own connection severs itself where psycopg would cancel
        # (``cancel_safe``), so its work runs in the caller's task: a task of its
        # own costs two more event-loop iterations per statement.
        result = await (work if isinstance(conn, OwnConnection) else _shielded(conn, work))
    except BaseException as exc:
        interrupt = _interruption(exc)
        if interrupt is not None:  # the connection was mid-statement: unusable
            sever(conn)
            await conn.close()
            raise interrupt from None
        if not expired:
            raise
        await conn.close()
        raise TimeoutError("no answer from PostgreSQL by the deadline") from None
    finally:
        timer.cancel()
    if expired:  # it answered as the deadline severed it: the connection is unusable
        await conn.close()
    return result


def _interruption(exc: BaseException) -> BaseException | None:
    """The cancellation (or ``KeyboardInterrupt``) behind ``exc``, if any.

    psycopg's own handling of a cancelled wait calls ``cancel_safe`` and then
    reads the severed socket: psycopg 3.3 raises the cancellation again,
    3.2 the ``OperationalError`` of the read, with the cancellation as its context.
    """
    for cause in (exc, exc.__context__):
        if isinstance(cause, _INTERRUPTS):
            return cause
    return None


async def _shielded(conn: AsyncConnection[Any], work: Coroutine[Any, Any, _T]) -> _T:
    """``work`` on an application's connection, in a shielded task of its own: a cancelled
    caller severs the connection before psycopg's own cancellation would wait for the server."""
    task = asyncio.get_running_loop().create_task(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():  # the caller was cancelled, the work goes on: end it
            task.add_done_callback(_retrieve)
            sever(conn)
            await asyncio.wait((task,))  # at once: its socket is shut
        raise


def _retrieve(task: asyncio.Future[Any]) -> None:
    # The caller reports its cancellation; the severed call's own error is moot.
    if not task.cancelled():
        task.exception()
