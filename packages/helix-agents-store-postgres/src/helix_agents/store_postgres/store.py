"""``PostgresStateStore``: core's ``StoreBase`` over a :class:`PostgresEngine`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Unpack

from psycopg_pool import AsyncConnectionPool

from helix_agents.core import ValidationError
from helix_agents.core.backend import MAX_COUNT, ExpiryOptions, StoreBase, utcnow

from ._config import (
    DEFAULT_OPERATION_TIMEOUT,
    POOL_OPTIONS,
    STORE_OPTIONS,
    PoolSettings,
    check_prepare,
    check_synchronous_commit,
    count,
    seconds,
    split_url,
    valid_schema,
)
from ._conninfo import Target
from ._engine import PostgresEngine
from ._pool import Connections
from ._standby import Standby

__all__ = ["PostgresStateStore", "open_url"]


class PostgresStateStore(StoreBase):
    """Session state in PostgreSQL (psycopg 3 async, psycopg_pool).

    Build it from a conninfo/URL (the store opens and closes its own pool,
    sized by ``pool_settings``) or from an application's ``pool`` (left open
    on :meth:`close`). Tables live in ``schema``; open the store with
    ``auto_migrate=True`` or call :meth:`migrate` once per deployment.
    ``max_messages`` keeps the newest N rows of each session. Each operation
    ends within ``operation_timeout`` seconds, waiting for a connection
    included, or raises :class:`~helix_agents.core.StoreUnavailableError`.
    ``prepare`` (``auto``, ``on``, ``off``) says whether the store's statements
    are prepared on the server (psycopg's ``execute(prepare=True)``): ``auto`` on
    the store's own pool only, ``on`` on an application's pool too (unless its
    ``prepare_threshold`` is ``None``); behind PgBouncer before 1.21 in
    transaction mode, ``off``.

    Across a failover (docs/scaling.md): ``synchronous_commit`` (PostgreSQL's
    values) is set on each of the store's connections as it connects (FO-10);
    ``standby`` is a second conninfo whose server takes the reads, each waiting
    up to ``standby_wait`` seconds for the store's own commits to be visible
    there (FO-11, FO-12). ``idle_ttl``, ``sweep_interval``, ``keep_checkpoints`` and
    ``checkpoint_ttl`` are the expiry options of docs/lifecycle.md.
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
        synchronous_commit: str | None = None,
        standby: str | None = None,
        standby_wait: float = 1.0,
        **expiry: Unpack[ExpiryOptions],
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
        self.schema = valid_schema(schema)
        self.auto_migrate = auto_migrate
        self.operation_timeout = seconds("operation_timeout", operation_timeout)
        self.prepare = check_prepare(prepare)
        self.synchronous_commit = check_synchronous_commit(synchronous_commit)
        self.standby_wait = seconds("standby_wait", standby_wait)
        target = None if conninfo is None else Target.parse(conninfo)
        if self.synchronous_commit is not None:
            if target is None:
                raise ValidationError(
                    "option synchronous_commit needs a conninfo: set it on the connections "
                    "of the application's pool instead"
                )
            target = target.with_setting("synchronous_commit", self.synchronous_commit)
        settings = pool_settings or PoolSettings()
        self._connections = Connections(target, pool, settings, self.operation_timeout, prepare)
        self._standby = None
        if standby is not None:
            replica = Connections(
                Target.parse(standby), None, settings, self.operation_timeout, prepare
            )
            self._standby = Standby(replica, self.standby_wait)
        engine = PostgresEngine(self._connections, self.schema, auto_migrate, self._standby)
        super().__init__(engine, max_messages=max_messages, clock=clock, **expiry)

    def __repr__(self) -> str:
        target = self._connections.target
        where = f"pool={self.pool.name!r}" if target is None else repr(target.shown)
        replica = None if self._standby is None else self._standby.connections.target
        standby = "" if replica is None else f", standby={replica.shown!r}"
        return f"{type(self).__name__}({where}, schema={self.schema!r}{standby})"

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        """The connection pool (the store's own, or the one the application passed)."""
        return self._connections.pool

    @property
    def standby_pool(self) -> AsyncConnectionPool[Any] | None:
        """The standby's connection pool (``standby=``), or ``None``."""
        return None if self._standby is None else self._standby.connections.pool

    @property
    def prepared_statements(self) -> bool:
        """Whether the store now prepares its statements on the server (see ``prepare``).

        It stops for good, with one warning, when the server or a pooler in
        front of it refuses a prepared statement.
        """
        return self._connections.preparing


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> PostgresStateStore:
    """The ``postgresql://`` / ``postgres://`` entry point; ``namespace`` is the schema.

    Store options come as keywords or as URL query parameters (``?max_size=20``);
    see :func:`~helix_agents.store_postgres._config.split_url`. An unknown
    keyword is a :class:`ValidationError`.
    """
    conninfo, from_url = split_url(url)
    unknown = sorted(set(options) - POOL_OPTIONS - STORE_OPTIONS)
    if unknown:
        known = ", ".join(sorted(POOL_OPTIONS | STORE_OPTIONS | {"namespace"}))
        raise ValidationError(
            f"unknown option {unknown[0]!r} for a PostgreSQL store; known: {known}"
        )
    merged = {**from_url, **options}
    pool = {k: merged.pop(k) for k in list(merged) if k in POOL_OPTIONS}
    if namespace is not None:
        merged["schema"] = namespace
    return PostgresStateStore(conninfo, pool_settings=PoolSettings(**pool), **merged)
