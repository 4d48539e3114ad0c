"""EVALSHA packed in one pass and sent on a connection of the client's own pool.

redis-py's generic command path (``execute_command``: its retry wrapper,
observability hooks, the per-argument packer and the response callbacks) costs
more client time per call than the server spends running a commit
(docs/performance.md). A standalone client's scripts go this shorter way: the
command head is encoded once per script, the keys and arguments in one pass,
and the connection is borrowed from and returned to the client's pool, which
still connects, authenticates, checks health and disconnects on an error as it
does for every other command. A cluster client keeps the generic path (slot
routing, ``MOVED``/``ASK``).

The store never retries a command on its own (see ``_client.py``); here a call
is sent once whatever retry policy a caller's own client carries.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis, RedisCluster

__all__ = ["Wire", "wire_for"]


class Wire:
    """Sends ``EVALSHA`` on ``client``'s pool; :meth:`head` is encoded once per script sha."""

    def __init__(self, client: Redis) -> None:
        self._pool = client.connection_pool
        kwargs = self._pool.connection_kwargs
        self._encoder = self._pool.get_encoder()
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
        parts = [self._encode(v) for v in (len(keys), *keys, *args)]
        return b"".join(
            [
                b"*%d\r\n" % (len(parts) + 2),
                head,
                *[b"$%d\r\n%s\r\n" % (len(p), p) for p in parts],
            ]
        )

    async def call(self, packed: bytes) -> Any:
        """Send ``packed`` on a pooled connection and read its reply (a ResponseError raises).

        The connection disconnects itself on a timeout, an I/O error or a
        cancellation mid-call, so it never goes back to the pool with a reply
        still owed.
        """
        conn = await self._pool.get_connection()
        try:
            await conn.send_packed_command(packed)
            return await conn.read_response()
        finally:
            await self._pool.release(conn)


def wire_for(client: Redis | RedisCluster) -> Wire | None:
    """The fast path for a standalone client of a pool; ``None`` for a cluster or a client
    pinned to one connection (``single_connection_client``), which keep the generic path."""
    if isinstance(client, Redis) and client.connection is None:
        if not getattr(client, "single_connection_client", False):
            return Wire(client)
    return None
