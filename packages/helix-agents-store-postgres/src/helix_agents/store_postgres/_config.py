"""Store configuration: pool settings, timeouts, the options a ``postgresql://`` URL carries."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from helix_agents.core import ValidationError
from helix_agents.core.backend import OPTION_NAMES, check_userinfo, redact_url

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_OPERATION_TIMEOUT",
    "POOL_OPTIONS",
    "PREPARE_MODES",
    "STORE_OPTIONS",
    "SYNCHRONOUS_COMMIT",
    "PoolSettings",
    "check_prepare",
    "check_synchronous_commit",
    "count",
    "seconds",
    "split_url",
    "valid_schema",
]

DEFAULT_OPERATION_TIMEOUT = 10.0
"""Seconds one operation may take, waiting for a connection included."""
DEFAULT_CONNECT_TIMEOUT = 5.0
"""Seconds to open one connection (per host tried): TCP, TLS and authentication."""

PREPARE_MODES = ("auto", "on", "off")
"""The values of the store's ``prepare`` option (docs/backends/postgres.md, PgBouncer)."""

SYNCHRONOUS_COMMIT = ("off", "local", "remote_write", "on", "remote_apply")
"""The values of the store's ``synchronous_commit`` option: PostgreSQL's own (FO-10)."""

_MAX_IDENTIFIER = 63  # NAMEDATALEN - 1: PostgreSQL silently truncates longer names


def seconds(name: str, value: object) -> float:
    """``value`` as seconds if it is a finite number above zero, else :class:`ValidationError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValidationError(f"option {name}={value!r} must be a finite number of seconds above 0")
    return float(value)


def count(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer in ``low..high``, else :class:`ValidationError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        span = f"at least {low}" if high is None else f"in {low}..{high}"
        raise ValidationError(f"option {name}={value!r} must be an integer {span}")
    return value


def check_prepare(prepare: object) -> str:
    """``prepare`` if it is one of :data:`PREPARE_MODES`, else :class:`ValidationError`."""
    if not isinstance(prepare, str) or prepare not in PREPARE_MODES:
        raise ValidationError(
            f"option prepare={prepare!r} must be one of {', '.join(PREPARE_MODES)}"
        )
    return prepare


def check_synchronous_commit(value: object) -> str | None:
    """``value`` if it is ``None`` or one of :data:`SYNCHRONOUS_COMMIT`, else
    :class:`ValidationError` naming it (FO-10)."""
    if value is not None and (not isinstance(value, str) or value not in SYNCHRONOUS_COMMIT):
        raise ValidationError(
            f"option synchronous_commit={value!r} must be one of {', '.join(SYNCHRONOUS_COMMIT)}"
        )
    return value


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """How the pool a store opens for itself is sized and kept healthy.

    ``check`` tests each connection as it leaves the pool (one extra round
    trip per checkout; without it a dead idle connection is found by its first
    use, and the store retries reads once). ``timeout`` is how long opening the
    store waits for ``min_size`` connections; ``connect_timeout`` bounds each
    new connection (``None``: the conninfo's ``connect_timeout``, else
    :data:`DEFAULT_CONNECT_TIMEOUT`). Times are in seconds.
    """

    min_size: int = 1
    max_size: int = 10
    max_idle: float = 600.0
    max_lifetime: float = 3600.0
    check: bool = False
    timeout: float = 30.0
    connect_timeout: float | None = None

    def __post_init__(self) -> None:
        count("min_size", self.min_size, 0)
        count("max_size", self.max_size, max(1, self.min_size))
        for name in ("max_idle", "max_lifetime", "timeout"):
            seconds(name, getattr(self, name))
        if self.connect_timeout is not None:
            seconds("connect_timeout", self.connect_timeout)
        if not isinstance(self.check, bool):
            raise ValidationError(f"option check={self.check!r} must be a boolean")


def _flag(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not a boolean")


def _interval(value: str) -> float | None:
    return None if value == "off" else float(value)


_URL_OPTIONS: dict[str, Callable[[str], Any]] = {
    "min_size": int,
    "max_size": int,
    "max_idle": float,
    "max_lifetime": float,
    "check": _flag,
    "timeout": float,
    "schema": str,
    "namespace": str,
    "auto_migrate": _flag,
    "max_messages": int,
    "operation_timeout": float,
    "prepare": str,
    "synchronous_commit": str,
    "standby": str,
    "standby_wait": float,
    # the expiry options (docs/lifecycle.md)
    "idle_ttl": float,
    "sweep_interval": _interval,
    "keep_checkpoints": int,
    "checkpoint_ttl": float,
}
POOL_OPTIONS = frozenset(
    {"min_size", "max_size", "max_idle", "max_lifetime", "check", "timeout", "connect_timeout"}
)
STORE_OPTIONS = frozenset(
    {
        "schema",
        "auto_migrate",
        "max_messages",
        "operation_timeout",
        "clock",
        "prepare",
        "synchronous_commit",
        "standby",
        "standby_wait",
        *OPTION_NAMES,
    }
)


def split_url(url: str) -> tuple[str, dict[str, Any]]:
    """The libpq URL without the store's own query options, and those options, typed.

    Store options (``min_size``, ``max_size``, ``max_idle``, ``max_lifetime``,
    ``check``, ``timeout``, ``schema`` (or ``namespace``), ``auto_migrate``, ``max_messages``,
    ``operation_timeout``, ``prepare``, ``synchronous_commit``, ``standby``,
    ``standby_wait``, and the expiry options ``idle_ttl``, ``sweep_interval`` (seconds or
    ``off``), ``keep_checkpoints``, ``checkpoint_ttl``) are taken out; every other query parameter
    (``sslmode``, ``connect_timeout``, ``application_name``, …) stays for the
    conninfo. A malformed URL or option value is a :class:`ValidationError`
    that never shows the password.
    """
    if not isinstance(url, str):
        raise ValidationError(f"a PostgreSQL URL must be a string, got {type(url).__name__}")
    check_userinfo(url)
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:
        raise ValidationError(f"store URL {redact_url(url)!r} is malformed: {exc}") from None
    options: dict[str, Any] = {}
    rest: list[tuple[str, str]] = []
    for key, value in query:
        convert = _URL_OPTIONS.get(key)
        if convert is None:
            rest.append((key, value))
            continue
        try:
            options[key] = convert(value)
        except ValueError:
            raise ValidationError(f"store URL option {key}={value!r} is not valid") from None
    _namespace_as_schema(options)
    # Percent-encode spaces (libpq does not read "+" as a space).
    return urlunsplit(parts._replace(query=urlencode(rest, quote_via=quote))), options


def _namespace_as_schema(options: dict[str, Any]) -> None:
    """``namespace=`` of a URL is the schema, as ``open_store``'s ``namespace`` keyword is."""
    if "namespace" not in options:
        return
    namespace = options.pop("namespace")
    if options.setdefault("schema", namespace) != namespace:
        raise ValidationError(
            f"store URL options schema={options['schema']!r} and namespace={namespace!r} "
            f"name different schemas"
        )


def valid_schema(schema: object) -> str:
    """``schema`` if the store may keep its tables there, else :class:`ValidationError`.

    PostgreSQL reserves names starting with ``pg_`` (``pg_catalog``,
    ``pg_toast``, …) and ``information_schema`` holds the SQL catalog views.
    """
    if not isinstance(schema, str) or not schema or "\x00" in schema:
        raise ValidationError(f"schema {schema!r} must be a non-empty string")
    try:
        size = len(schema.encode())
    except UnicodeEncodeError:
        raise ValidationError(f"schema {schema!r} is not valid Unicode") from None
    if size > _MAX_IDENTIFIER:
        raise ValidationError(f"schema {schema!r} is longer than {_MAX_IDENTIFIER} bytes")
    if schema.startswith("pg_") or schema == "information_schema":
        raise ValidationError(f"schema {schema!r} is reserved for PostgreSQL's system catalogs")
    return schema
