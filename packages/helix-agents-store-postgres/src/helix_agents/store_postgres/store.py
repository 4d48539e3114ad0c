"""``PostgresStateStore``: core's ``StoreBase`` over a :class:`PostgresEngine`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from helix_agents.core import ValidationError
from helix_agents.core.backend import MAX_COUNT, StoreBase, utcnow

from ._config import (
    DEFAULT_OPERATION_TIMEOUT,
    POOL_OPTIONS,
    STORE_OPTIONS,
    PoolSettings,
    check_prepare,
    count,
    seconds,
    split_url,
    valid_schema,
)
from ._conninfo import Target
from ._engine import PostgresEngine
from ._pool import Connections

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
        self.schema = valid_schema(schema)
        self.auto_migrate = auto_migrate
        self.operation_timeout = seconds("operation_timeout", operation_timeout)
        self.prepare = check_prepare(prepare)
        target = None if conninfo is None else Target.parse(conninfo)
        settings = pool_settings or PoolSettings()
        self._connections = Connections(target, pool, settings, self.operation_timeout, prepare)
        engine = PostgresEngine(self._connections, self.schema, auto_migrate)
        super().__init__(engine, max_messages=max_messages, clock=clock)

    def __repr__(self) -> str:
        target = self._connections.target
        where = f"pool={self.pool.name!r}" if target is None else repr(target.shown)
        return f"{type(self).__name__}({where}, schema={self.schema!r})"

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        """The connection pool (the store's own, or the one the application passed)."""
        return self._connections.pool

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
