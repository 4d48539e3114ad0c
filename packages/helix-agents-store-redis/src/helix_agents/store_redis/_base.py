"""The plumbing of :class:`RedisStateStore`: the client, script calls, error wrapping."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import StoreUnavailableError, ValidationError

from ._codec import micros, text
from ._config import StoreOptions, connect
from ._errors import DRIVER_ERRORS, not_found, unavailable
from ._keys import SESSION_KEYS
from ._scripts import Scripts

__all__ = ["StoreBase"]

log = logging.getLogger("helix_agents.store_redis")


def _utcnow() -> datetime:
    return datetime.now(UTC)


class StoreBase:
    """Owns (or borrows) the client and runs the scripts; the protocol lives in subclasses."""

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | RedisCluster | None = None,
        key_prefix: str = "helix",
        namespace: str | None = None,
        idle_ttl: float | timedelta | None = None,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = _utcnow,
        **client_options: Any,
    ) -> None:
        if (url is None) == (client is None):
            raise TypeError("pass exactly one of url and client")
        self._url = url
        self.options = StoreOptions.build(key_prefix, namespace, idle_ttl, max_messages)
        self.max_messages = max_messages
        self._client_options = client_options
        self._client = client
        self._owns_client = client is None
        self._scripts: Scripts | None = None
        self._closed = False
        self._clock = clock

    @property
    def client(self) -> Redis | RedisCluster:
        """The redis-py client in use; StoreUnavailableError when the store is not open."""
        return self._live()[0]

    @property
    def cluster(self) -> bool:
        """Whether the store talks to a Redis Cluster (listing then takes a second step)."""
        return isinstance(self._client, RedisCluster)

    async def __aenter__(self) -> Self:
        if self._scripts is not None:
            return self
        if self._closed:
            raise StoreUnavailableError("the Redis store was closed", may_have_landed=False)
        if self._client is None and self._url is not None:
            self._client = connect(self._url, self._client_options)
        assert self._client is not None
        scripts = Scripts(self._client)
        try:
            await scripts.load()
        except DRIVER_ERRORS as exc:
            await self.close()
            raise unavailable(exc, None, write=False) from None
        self._scripts = scripts
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the client if the store created it; every later call is StoreUnavailableError."""
        client, self._client, self._scripts = self._client, None, None
        self._closed = True
        if client is not None and self._owns_client:
            await client.aclose()

    def _live(self) -> tuple[Redis | RedisCluster, Scripts]:
        if self._client is None or self._scripts is None:
            raise StoreUnavailableError(
                "the Redis store is not open (use `async with store:`) or was closed",
                may_have_landed=False,
            )
        return self._client, self._scripts

    def _now(self) -> int:
        return micros(self._clock())

    def _common(self, session_id: str) -> list[Any]:
        """ARGV[1..4] of every session write."""
        return [session_id, self._now(), self.options.idle_ttl_ms, 0 if self.cluster else 1]

    async def _call(
        self,
        name: str,
        session_id: str,
        args: list[Any],
        *,
        write: bool,
        keys: tuple[str, ...] = SESSION_KEYS,
    ) -> Any:
        """Run script ``name`` on the session's ``keys``; its reply as the client decoded it."""
        _, scripts = self._live()
        if not isinstance(session_id, str) or not session_id:
            raise not_found(session_id)
        try:
            return await scripts.run(name, self.options.keys.session(session_id, keys), args)
        except DRIVER_ERRORS as exc:
            raise unavailable(exc, session_id, write=write) from None
        except UnicodeEncodeError:
            # Lone surrogates: no Redis string (nor any other store's text) can hold them.
            raise ValidationError(
                f"session {session_id!r}: a value is not encodable as UTF-8",
                session_id=session_id,
            ) from None

    async def _run(
        self,
        name: str,
        session_id: str,
        args: list[Any],
        *,
        write: bool,
        keys: tuple[str, ...] = SESSION_KEYS,
    ) -> Any:
        """Run a script that replies with an array; a missing session raises here."""
        reply = text(await self._call(name, session_id, args, write=write, keys=keys))
        if reply[0] == "nf":
            raise not_found(session_id)
        return reply

    async def _index(self, name: str, user_key: str, args: list[Any]) -> None:
        """The cluster's second step on a user's listing index; a failure is logged, not raised.

        The session write already landed; the index catches up on the session's next write.
        """
        _, scripts = self._live()
        try:
            await scripts.run(name, [user_key], args)
        except DRIVER_ERRORS as exc:
            log.warning(
                "listing index %s of %s failed after the write landed: %s", name, args[0], exc
            )

    async def _after(self, session_id: str, reply: list[Any], mode: str = "LT") -> None:
        """After a landed write on a cluster, move the session's listing entry."""
        await self._relist(session_id, int(reply[1]), reply[2], mode)

    async def _relist(self, session_id: str, la: int, user_key: str, mode: str = "LT") -> None:
        if self.cluster and user_key:
            await self._index(
                "index_set", user_key, [session_id, -la, mode, self.options.idle_ttl_ms]
            )

    async def _require(self, session_id: str) -> None:
        """Raise SessionNotFoundError if the session does not exist (for refusals made here)."""
        client, _ = self._live()
        if not isinstance(session_id, str) or not session_id:
            raise not_found(session_id)
        try:
            found = await client.exists(self.options.keys.meta(session_id))
        except DRIVER_ERRORS as exc:
            raise unavailable(exc, session_id, write=False) from None
        if not found:
            raise not_found(session_id)
