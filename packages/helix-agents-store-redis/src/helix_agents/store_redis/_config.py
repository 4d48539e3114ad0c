"""Store options: from keywords and URL query arguments, checked before anything connects."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from helix_agents.core import ValidationError
from helix_agents.core.backend import MAX_COUNT, check_max_messages, redact_url

from ._keys import KeySpace

__all__ = [
    "CONNECT_TIMEOUT",
    "OPERATION_TIMEOUT",
    "RENAMED",
    "STORE_QUERY",
    "StoreOptions",
    "Timeouts",
    "refuse_renamed",
    "split_store_options",
]

# Seconds; see docs/backends/redis.md, "Timeouts".
OPERATION_TIMEOUT = 10.0
CONNECT_TIMEOUT = 5.0
# Options of the store itself; any other URL query argument goes to redis-py.
STORE_QUERY = (
    "key_prefix",
    "idle_ttl",
    "max_messages",
    "operation_timeout",
    "connect_timeout",
    "wait_replicas",
    "wait_timeout",
    "sweep_interval",
    "keep_checkpoints",
    "checkpoint_ttl",
)
_INT_QUERY = ("max_messages", "wait_replicas", "keep_checkpoints")
# redis-py's names for what operation_timeout and connect_timeout set: one name each.
RENAMED = {"socket_timeout": "operation_timeout", "socket_connect_timeout": "connect_timeout"}


def refuse_renamed(names: Iterable[str]) -> None:
    """ValidationError if ``names`` holds a redis-py timeout the store sets itself."""
    for name in names:
        if name in RENAMED:
            raise ValidationError(f"Redis store option {name!r}: use {RENAMED[name]!r} instead")


def seconds(name: str, value: object) -> float:
    """``value`` (seconds, or a timedelta) as a positive finite float, else ValidationError."""
    number = value.total_seconds() if isinstance(value, timedelta) else value
    if (
        isinstance(number, bool)
        or not isinstance(number, (int, float))
        or not math.isfinite(number)
        or number <= 0
    ):
        raise ValidationError(f"{name} {value!r} is not a positive, finite number of seconds")
    return float(number)


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a connection attempt, and each wait for a reply, may take (seconds)."""

    operation: float
    connect: float

    @classmethod
    def build(
        cls, operation: float | timedelta | None, connect: float | timedelta | None
    ) -> Timeouts:
        """The given timeouts, checked; ``None`` takes the documented default."""
        return cls(
            OPERATION_TIMEOUT if operation is None else seconds("operation_timeout", operation),
            CONNECT_TIMEOUT if connect is None else seconds("connect_timeout", connect),
        )


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """What the store needs besides a client: key names, idle TTL (ms, 0 = none), retention."""

    keys: KeySpace
    idle_ttl_ms: int
    max_messages: int | None

    @classmethod
    def build(
        cls,
        key_prefix: str,
        namespace: str | None,
        idle_ttl: float | timedelta | None,
        max_messages: int | None,
    ) -> StoreOptions:
        """Validate the options; ``idle_ttl`` is seconds or a timedelta, at least 1 ms."""
        if max_messages is not None:
            check_max_messages(max_messages)
        ttl_ms = 0
        if idle_ttl is not None:
            ttl_ms = round(seconds("idle_ttl", idle_ttl) * 1000)
            if not 1 <= ttl_ms < MAX_COUNT:
                raise ValidationError(f"idle_ttl {idle_ttl!r} is outside 1 ms..2**62 ms")
        return cls(KeySpace.build(key_prefix, namespace), ttl_ms, max_messages)


def split_store_options(url: str) -> tuple[str, dict[str, Any]]:
    """The URL without the store's own query arguments, and those arguments, typed."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        reason = str(exc)
    else:
        return _split(parts)
    raise ValidationError(f"Redis URL {redact_url(url)!r} is malformed: {reason}")


def _split(parts: Any) -> tuple[str, dict[str, Any]]:
    ours: dict[str, Any] = {}
    rest = []
    query = parse_qsl(parts.query, keep_blank_values=True)
    refuse_renamed(name for name, _ in query)
    for name, value in query:
        if name not in STORE_QUERY:
            rest.append((name, value))
        elif name == "key_prefix":
            ours[name] = value
        elif name == "sweep_interval" and value == "off":
            ours[name] = None
        else:
            ours[name] = _number(name, value)
    return urlunsplit(parts._replace(query=urlencode(rest))), ours


def _number(name: str, value: str) -> int | float:
    try:
        return int(value) if name in _INT_QUERY else float(value)
    except ValueError:
        pass
    raise ValidationError(f"store URL option {name}={value!r} is not a number")
