"""The plumbing of :class:`RedisStateStore`: the client, script calls, error wrapping."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Self, TypeVar

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import StoreUnavailableError, ValidationError
from helix_agents.core.backend import ClosesOnExit, check_id
from helix_agents.core.clock import check_clock, utcnow
from helix_agents.core.errors import session_not_found

from ._client import build_client, describe
from ._codec import micros, text
from ._config import StoreOptions, Timeouts, split_store_options
from ._errors import DRIVER_ERRORS, driver_error
from ._keys import SESSION_KEYS, summaries_of
from ._open import open_scripts
from ._schema import COMMON
from ._scripts import Scripts

_T = TypeVar("_T")

__all__ = ["StoreBase"]

log = logging.getLogger("helix_agents.store_redis")


class StoreBase(ClosesOnExit):
    """Owns (or borrows) the client and runs the scripts; the protocol lives in subclasses."""

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | RedisCluster | None = None,
        key_prefix: str | None = None,
        namespace: str | None = None,
        idle_ttl: float | timedelta | None = None,
        max_messages: int | None = None,
        operation_timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        clock: Callable[[], datetime] = utcnow,
        **client_options: Any,
    ) -> None:
        if (url is None) == (client is None):
            raise ValidationError("pass exactly one of url and client")
        if url is not None and not isinstance(url, str):
            raise ValidationError(f"the Redis URL must be a str, not {type(url).__name__}")
        if client is not None and not isinstance(client, (Redis, RedisCluster)):
            raise ValidationError(
                f"client must be a redis.asyncio Redis or RedisCluster, not {type(client).__name__}"
            )
        self._clock = check_clock(clock)
        self._where = "Redis" if url is None else f"Redis at {describe(url)}"
        query: dict[str, Any] = {}
        if url is not None:
            url, query = split_store_options(url)
        elif operation_timeout is not None or connect_timeout is not None or client_options:
            raise ValidationError(
                "a borrowed client keeps its own settings: pass timeouts and options to it"
            )
        self.max_messages = query.get("max_messages") if max_messages is None else max_messages
        self.options = StoreOptions.build(
            query.get("key_prefix", "helix") if key_prefix is None else key_prefix,
            namespace,
            query.get("idle_ttl") if idle_ttl is None else idle_ttl,
            self.max_messages,
        )
        self.timeouts = Timeouts.build(
            query.get("operation_timeout") if operation_timeout is None else operation_timeout,
            query.get("connect_timeout") if connect_timeout is None else connect_timeout,
        )
        self._client = client if url is None else build_client(url, self.timeouts, client_options)
        # Read on every write; isinstance against redis-py's classes costs ~1 µs each time.
        self._cluster = isinstance(self._client, RedisCluster)
        self._owns_client = client is None
        self._scripts: Scripts | None = None
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._scripts else "not open"
        return f"<{type(self).__name__} {self._where} {self.options.keys.base!r} {state}>"

    @property
    def client(self) -> Redis | RedisCluster:
        """The redis-py client in use; StoreUnavailableError when the store is not open."""
        return self._live()[0]

    @property
    def cluster(self) -> bool:
        """Whether the store talks to a Redis Cluster (listing then takes a second step)."""
        return self._cluster

    async def __aenter__(self) -> Self:
        if self._scripts is not None:
            return self
        if self._closed or self._client is None:
            raise StoreUnavailableError("the Redis store was closed", may_have_landed=False)
        try:
            self._scripts = await open_scripts(self._client, self._where)
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Close the client if the store created it; every later call is StoreUnavailableError."""
        client, scripts = self._client, self._scripts
        self._client, self._scripts = None, None
        self._closed = True
        if scripts is not None:
            await scripts.aclose()
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
        """The ARGV slots ``COMMON`` of every session write."""
        return COMMON.pack(
            SID=session_id, NOW=self._now(), TTL=self.options.idle_ttl_ms, INLINE=not self.cluster
        )

    async def _run(
        self,
        name: str,
        session_id: str,
        args: list[Any],
        *,
        write: bool,
        keys: tuple[str, ...] = SESSION_KEYS,
        raw: bool = False,
    ) -> Any:
        """Run script ``name`` on the session's ``keys``. Its array reply, decoded, where a
        missing session raises here; with ``raw``, the reply as the client decoded it."""
        _, scripts = self._live()
        try:
            reply = await scripts.run(name, self.options.keys.session(session_id, keys), args)
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=write) from exc
        if raw:
            return reply
        reply = text(reply)
        if reply[0] == "session_not_found":
            raise session_not_found(session_id)
        return reply

    async def _index(self, name: str, user_key: str, args: list[Any]) -> None:
        """The cluster's second step on a user's listing index (and its summaries, see
        ``lua/_index.lua``); a failure is logged, not raised.

        The session write already landed; the index catches up on the session's next write.
        """
        _, scripts = self._live()
        try:
            await scripts.run(name, [user_key, summaries_of(user_key)], args)
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

    def _open_session(self, session_id: str) -> None:
        """Refuse a closed store before any argument is looked at (INP-5), then a bad id."""
        self._live()
        check_id(session_id, "session_id")

    async def _checked(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` after the store and the session id; if it refuses the input, a
        missing session is reported first, as in every store."""
        self._open_session(session_id)
        try:
            return check()
        except ValidationError:
            await self._require(session_id)
            raise

    async def _settle(self, session_id: str, tokens: Mapping[str, str]) -> None:
        """Apply the session's journal of app and user deltas (``_scoped.ScopedMixin``)."""
        raise NotImplementedError

    async def _require(self, session_id: str) -> None:
        """Raise SessionNotFoundError if the session does not exist (for refusals made here)."""
        client, _ = self._live()
        try:
            found = await client.exists(self.options.keys.meta(session_id))
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=False) from exc
        if not found:
            raise session_not_found(session_id)
