"""``RedisStateStore``: core's ``StoreBase`` over a :class:`RedisEngine`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import StoreUnavailableError, ValidationError
from helix_agents.core.backend import DEFAULT_SWEEP_INTERVAL, StoreBase, utcnow

from ._client import build_client, describe, is_cluster_url
from ._config import StoreOptions, Timeouts, split_store_options
from ._engine import RedisEngine
from ._wait import ReplicaWait

__all__ = ["RedisStateStore", "open_url"]


class RedisStateStore(StoreBase):
    """Session state in Redis (standalone, or a Redis Cluster), through ``redis.asyncio``.

    Build it from a URL (``redis://``, ``rediss://``, ``unix://``,
    ``redis+cluster://h:p,h:p``, ``redis+sentinel://h:p,h:p/<master>``; the store then owns
    and closes its client) or around
    a ``client`` you own. Options: ``key_prefix`` and ``namespace`` (keys live under
    ``<key_prefix>:<namespace>:``), ``idle_ttl`` (seconds or a timedelta: a session
    untouched that long expires whole), ``max_messages`` (retention),
    ``operation_timeout`` and ``connect_timeout`` (seconds), ``wait_replicas`` and
    ``wait_timeout`` (each write waits for that many replicas: docs/scaling.md),
    ``clock``, and core's expiry options ``sweep_interval``, ``keep_checkpoints`` and
    ``checkpoint_ttl`` (docs/lifecycle.md; a session's own TTLs work as on every
    store); the store's
    options may also be URL query arguments (keywords win); any other keyword goes
    to the redis-py client. See docs/backends/redis.md.
    """

    engine: RedisEngine

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
        wait_replicas: int | None = None,
        wait_timeout: float | timedelta | None = None,
        clock: Callable[[], datetime] = utcnow,
        sweep_interval: float | timedelta | None = DEFAULT_SWEEP_INTERVAL,
        keep_checkpoints: int | None = None,
        checkpoint_ttl: float | timedelta | None = None,
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
        where = "Redis" if url is None else f"Redis at {describe(url)}"
        query: dict[str, Any] = {}
        if url is not None:
            url, query = split_store_options(url)
        elif operation_timeout is not None or connect_timeout is not None or client_options:
            raise ValidationError(
                "a borrowed client keeps its own settings: pass timeouts and options to it"
            )
        max_messages = query.get("max_messages") if max_messages is None else max_messages
        options = StoreOptions.build(
            query.get("key_prefix", "helix") if key_prefix is None else key_prefix,
            namespace,
            query.get("idle_ttl") if idle_ttl is None else idle_ttl,
            max_messages,
        )
        timeouts = Timeouts.build(
            query.get("operation_timeout") if operation_timeout is None else operation_timeout,
            query.get("connect_timeout") if connect_timeout is None else connect_timeout,
        )
        wait = ReplicaWait.build(
            query.get("wait_replicas") if wait_replicas is None else wait_replicas,
            query.get("wait_timeout") if wait_timeout is None else wait_timeout,
            timeouts.operation,
        )
        cluster = isinstance(client, RedisCluster) or (url is not None and is_cluster_url(url))
        if wait is not None and cluster:
            raise ValidationError(
                "wait_replicas is for redis:// and redis+sentinel://, not a Redis Cluster"
            )
        if url is not None:
            client = build_client(url, timeouts, client_options)
        assert client is not None
        self.options = options
        self.timeouts = timeouts
        engine = RedisEngine(client, options, where, owns=url is not None, wait=wait)
        if sweep_interval is DEFAULT_SWEEP_INTERVAL:  # not given: the URL's, if any
            sweep_interval = query.get("sweep_interval", sweep_interval)
        # idle_ttl stays Redis's own (PEXPIREAT on every key, server time: docs/backends/
        # redis.md); core's expiry serves the sessions' own TTLs and checkpoint retention.
        super().__init__(
            engine,
            max_messages=max_messages,
            clock=clock,
            sweep_interval=sweep_interval,
            keep_checkpoints=query.get("keep_checkpoints", keep_checkpoints)
            if keep_checkpoints is None
            else keep_checkpoints,
            checkpoint_ttl=query.get("checkpoint_ttl")
            if checkpoint_ttl is None
            else checkpoint_ttl,
        )

    def __repr__(self) -> str:
        state = {"new": "not open", "open": "open", "closed": "closed"}[self._state]
        return f"<{type(self).__name__} {self.engine.where} {self.options.keys.base!r} {state}>"

    @property
    def client(self) -> Redis | RedisCluster:
        """The redis-py client in use; StoreUnavailableError when the store is not open."""
        if self._state != "open":
            raise StoreUnavailableError(
                "the Redis store is not open (use `async with store:`) or was closed",
                may_have_landed=False,
            )
        return self.engine.client

    @property
    def cluster(self) -> bool:
        """Whether the store talks to a Redis Cluster (the listing then takes a second step)."""
        return self.engine.cluster


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> RedisStateStore:
    """The entry point of ``redis://``, ``rediss://``, ``redis+cluster://`` and
    ``redis+sentinel://`` URLs.

    The store's options may also come as URL query arguments; keyword options win.
    """
    return RedisStateStore(url, namespace=namespace, **options)
