"""EVALSHA packed in one pass and sent on connections of the store's own.

redis-py's generic command path (``execute_command``: its retry wrapper,
observability hooks, the per-argument packer, the pool's lock and checks, and
a timeout task around every socket write) costs more client time per call than
the server spends running a commit (docs/performance.md). A standalone
client's scripts go this shorter way: the command head is encoded once per
script, the keys and arguments in one pass, and the call is sent on a
connection made with the client's own settings (address, credentials, TLS,
database), held by the store between calls, under one deadline for the whole
call, kept with every other call's by one timer (:class:`Deadlines`). A
cluster client keeps the generic path (slot routing, ``MOVED``/``ASK``).

The store never retries a command on its own (see ``_client.py``); here a call
is sent once whatever retry policy a caller's own client carries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["Deadlines", "Wire", "wire_for"]

# Connections kept between calls; more are made for a burst and closed after it.
_KEEP = 16


class Deadlines:
    """The deadlines of a wire's calls, ``timeout`` seconds each, kept by one timer.

    ``asyncio.timeout`` per call schedules a timer and cancels it again, which
    costs several µs of a call that takes tens. Every call here has the same
    timeout, so the calls in flight are due in the order they started: the
    timer waits for the oldest one and, when it fires, cancels the task of each
    call past its deadline (which :meth:`expired` then turns into a timeout) and
    waits for the next. A call that ends in time only leaves the table.
    """

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        # task -> (deadline, its cancel requests when the call started), oldest first.
        self._due: dict[asyncio.Task[Any], tuple[float, int]] = {}
        # task -> its cancel requests when the call started, for calls the timer cancelled.
        self._expired: dict[asyncio.Task[Any], int] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def arm(self) -> asyncio.Task[Any]:
        """Start the current task's call; pass the task to :meth:`disarm` when it ends."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a Redis call runs in a task")
        loop = task.get_loop()
        if loop is not self._loop:
            # A timer of another (closed) loop would never fire on this one.
            self.close()
            self._due.clear()
            self._expired.clear()
            self._loop = loop
        due = loop.time() + self._timeout
        self._due[task] = (due, task.cancelling())
        if self._timer is None:
            self._timer = loop.call_at(due, self._fire)
        return task

    def disarm(self, task: asyncio.Task[Any]) -> None:
        """The call of ``task`` ended (in time or not)."""
        self._due.pop(task, None)
        self._expired.pop(task, None)

    def expired(self, task: asyncio.Task[Any]) -> bool:
        """Whether the CancelledError ``task`` got is its call's deadline alone (then it is
        withdrawn, as ``asyncio.timeout`` does); False for a cancellation from outside."""
        started = self._expired.pop(task, None)
        return started is not None and task.uncancel() <= started

    def _fire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = loop.time()
        while self._due:
            task, (due, started) = next(iter(self._due.items()))
            if due > now:
                self._timer = loop.call_at(due, self._fire)
                return
            del self._due[task]
            self._expired[task] = started
            task.cancel()

    def close(self) -> None:
        """Stop the timer (the store is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Wire:
    """Sends ``EVALSHA`` for one standalone client; :meth:`head` is encoded once per sha."""

    def __init__(self, client: Redis) -> None:
        pool = client.connection_pool
        kwargs = pool.connection_kwargs
        self._timeout: float | None = kwargs.get("socket_timeout")
        self._deadlines = None if self._timeout is None else Deadlines(self._timeout)
        self._make: Callable[[], AbstractConnection] = lambda: pool.connection_class(**kwargs)
        self._idle: list[AbstractConnection] = []
        self._encoder = pool.get_encoder()  # type: ignore[no-untyped-call]  # redis-py
        self._utf8 = (
            kwargs.get("encoding", "utf-8").lower().replace("_", "-") in ("utf-8", "utf8")
            and kwargs.get("encoding_errors", "strict") == "strict"
        )

    @staticmethod
    def head(sha: str) -> bytes:
        """``EVALSHA <sha>`` as RESP bulk strings (the array header comes per call)."""
        return b"$7\r\nEVALSHA\r\n$%d\r\n%s\r\n" % (len(sha), sha.encode())

    def _encode(self, value: Any) -> bytes:
        if type(value) is str and self._utf8:
            return value.encode()
        if type(value) is int:
            return b"%d" % value
        encoded: bytes = self._encoder.encode(value)  # what redis-py would send, or DataError
        return encoded

    def pack(self, head: bytes, keys: list[str], args: list[Any]) -> bytes:
        """The whole command: ``EVALSHA sha numkeys *keys *args`` in RESP."""
        values = [len(keys), *keys, *args]
        return b"*%d\r\n%s%s" % (len(values) + 2, head, self._bulk(values))

    def _bulk(self, values: list[Any]) -> bytes:
        """``values`` as RESP bulk strings. Ints and ASCII text (keys, numbers, most rows)
        are formatted as one str and encoded once; anything else is encoded alone."""
        out: list[bytes] = []
        run: list[str] = []
        for value in values:
            kind = type(value)
            if kind is int:
                text = str(value)
            elif kind is str and self._utf8 and value.isascii():
                text = value
            else:
                encoded = self._encode(value)
                run.append(f"${len(encoded)}\r\n")
                out += ("".join(run).encode(), encoded, b"\r\n")
                run = []
                continue
            run.append(f"${len(text)}\r\n{text}\r\n")
        out.append("".join(run).encode())
        return b"".join(out)

    async def call(self, packed: bytes) -> Any:
        """Send ``packed`` and read its reply (an error reply raises its ResponseError).

        A connection disconnects itself on an I/O error, a timeout or a
        cancellation mid-call (so it never holds a reply still owed) and
        reconnects on its next call; one the server closed while it was kept
        reconnects before it sends.
        """
        conn = self._idle.pop() if self._idle else self._make()
        try:
            if conn.is_connected and await _stale(conn):
                await conn.disconnect()
            if not conn.is_connected:
                # The handshake runs under redis-py's own timeouts, so a failure there
                # is known to have sent nothing.
                conn.socket_timeout = self._timeout
                await conn.connect()  # type: ignore[no-untyped-call]  # redis-py
            # The call itself: one deadline for it instead of a timeout per write and read.
            conn.socket_timeout = None
            if self._deadlines is None:
                await conn.send_packed_command(packed)
                return await conn.read_response()
            task = self._deadlines.arm()
            try:
                await conn.send_packed_command(packed)
                return await conn.read_response()
            except asyncio.CancelledError:
                if self._deadlines.expired(task):
                    raise RedisTimeoutError("Timeout talking to the Redis server") from None
                raise
            finally:
                self._deadlines.disarm(task)
        finally:
            if len(self._idle) < _KEEP:
                self._idle.append(conn)
            else:
                await conn.disconnect()

    async def aclose(self) -> None:
        """Disconnect the connections kept between calls."""
        if self._deadlines is not None:
            self._deadlines.close()
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.disconnect()


async def _stale(conn: AbstractConnection) -> bool:
    """Whether a kept connection was closed by the server (idle ``timeout``, ``CLIENT KILL``)
    or holds bytes nobody asked for: as redis-py's pool checks before lending one."""
    # can_read() since redis-py 8; can_read_destructive() before (same check).
    check = getattr(conn, "can_read", None) or conn.can_read_destructive
    try:
        return bool(await check())
    except RedisConnectionError:
        return True


def wire_for(client: Redis | RedisCluster) -> Wire | None:
    """The fast path for a standalone client of a pool; ``None`` for a cluster or a client
    pinned to one connection (``single_connection_client``), which keep the generic path."""
    pinned = getattr(client, "single_connection_client", False)
    if isinstance(client, Redis) and client.connection is None and not pinned:
        return Wire(client)
    return None
