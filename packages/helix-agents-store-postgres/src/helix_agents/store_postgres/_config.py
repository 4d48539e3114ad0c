"""Store configuration: pool settings, and the options a ``postgresql://`` URL may carry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from helix_agents.core import ValidationError

__all__ = ["PoolSettings", "make_pool", "split_url", "valid_schema"]

_MAX_IDENTIFIER = 63  # NAMEDATALEN - 1: PostgreSQL silently truncates longer names


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """How the pool a store opens for itself is sized and kept healthy.

    ``check`` tests each connection as it leaves the pool (one extra round
    trip per checkout; without it a dead idle connection is found by its first
    use, and the store retries reads once). ``timeout`` is how long to wait
    for a connection, in seconds; ``max_idle`` and ``max_lifetime`` too.
    """

    min_size: int = 1
    max_size: int = 10
    max_idle: float = 600.0
    max_lifetime: float = 3600.0
    check: bool = False
    timeout: float = 30.0


def _flag(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not a boolean")


_URL_OPTIONS: dict[str, Callable[[str], Any]] = {
    "min_size": int,
    "max_size": int,
    "max_idle": float,
    "max_lifetime": float,
    "check": _flag,
    "timeout": float,
    "schema": str,
    "auto_migrate": _flag,
    "max_messages": int,
}
POOL_OPTIONS = frozenset({"min_size", "max_size", "max_idle", "max_lifetime", "check", "timeout"})


def split_url(url: str) -> tuple[str, dict[str, Any]]:
    """The libpq URL without the store's own query options, and those options, typed.

    Store options (``min_size``, ``max_size``, ``max_idle``, ``max_lifetime``,
    ``check``, ``timeout``, ``schema``, ``auto_migrate``, ``max_messages``) are
    taken out; every other query parameter (``sslmode``, ``application_name``,
    …) stays for libpq.
    """
    parts = urlsplit(url)
    options: dict[str, Any] = {}
    rest: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        convert = _URL_OPTIONS.get(key)
        if convert is None:
            rest.append((key, value))
            continue
        try:
            options[key] = convert(value)
        except ValueError:
            raise ValidationError(f"store URL option {key}={value!r} is not valid") from None
    # Percent-encode spaces (libpq does not read "+" as a space).
    return urlunsplit(parts._replace(query=urlencode(rest, quote_via=quote))), options


def valid_schema(schema: object) -> str:
    """``schema`` if it can name a PostgreSQL schema, else :class:`ValidationError`."""
    if not isinstance(schema, str) or not schema or "\x00" in schema:
        raise ValidationError(f"schema {schema!r} must be a non-empty string")
    if len(schema.encode()) > _MAX_IDENTIFIER:
        raise ValidationError(f"schema {schema!r} is longer than {_MAX_IDENTIFIER} bytes")
    return schema


def make_pool(conninfo: str, settings: PoolSettings) -> AsyncConnectionPool[AsyncConnection[Any]]:
    """A closed pool of autocommit connections that never prepare statements (PgBouncer-safe)."""
    return AsyncConnectionPool(
        conninfo,
        kwargs={"autocommit": True, "prepare_threshold": None},
        min_size=settings.min_size,
        max_size=settings.max_size,
        max_idle=settings.max_idle,
        max_lifetime=settings.max_lifetime,
        check=AsyncConnectionPool.check_connection if settings.check else None,
        timeout=settings.timeout,
        name="helix_agents.store_postgres",
        open=False,
    )
