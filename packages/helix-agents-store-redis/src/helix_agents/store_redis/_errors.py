"""From a redis-py exception to core's typed error, by redis-py's public exception classes
(and the exceptions they were raised from): never by where in redis-py they came from."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

from redis.exceptions import (
    AuthenticationError,
    AuthenticationWrongNumberOfArgsError,
    BusyLoadingError,
    InvalidResponse,
    MovedError,
    NoPermissionError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from helix_agents.core import StoreUnavailableError
from helix_agents.core.errors import StoreMisconfiguredError

__all__ = ["DRIVER_ERRORS", "driver_error", "misconfiguration"]

DRIVER_ERRORS = (RedisError, RedisClusterException, OSError)
_AUTH = (AuthenticationError, AuthenticationWrongNumberOfArgsError)
# Raised before anything was sent: no connection could be made.
_NOT_SENT = (ConnectionRefusedError, socket.gaierror, ssl.SSLError)
# Error replies a later attempt may not get.
_BUSY = ("max number of clients", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN")
_HUNG_UP = ("Connection closed by server", "Connection reset by peer")


def driver_error(
    exc: BaseException,
    session_id: str | None,
    *,
    write: bool,
    where: str = "Redis",
    opening: bool = False,
    tls_hint: str = "rediss://",
) -> StoreUnavailableError | StoreMisconfiguredError:
    """The core error for driver exception ``exc``; raise it ``from exc``.

    ``tls_hint`` is the setting that turns TLS on, named when a server hung up on the
    handshake while ``opening``.

    StoreMisconfiguredError when retrying cannot fix it (authentication, ACL, no
    such database, TLS, not a Redis server, and, while ``opening``, a setting the
    server refused), else StoreUnavailableError, whose ``may_have_landed`` says a
    write may have been sent: only a refusal to connect or an error reply (other
    than a script failing midway) proves it was not.
    """
    prefix = "" if session_id is None else f"session {session_id!r}: "
    detail = f"{type(exc).__name__}: {exc}"
    reason = misconfiguration(exc, opening=opening)
    if reason is not None:
        return StoreMisconfiguredError(
            f"{prefix}{where} refused the store: {reason} ({detail})", session_id=session_id
        )
    message = str(exc)
    refused = isinstance(exc, ResponseError) and "user_script" not in message
    # A demoted master's READONLY reply, which a Sentinel-managed client raises as a
    # ConnectionError: the write ran nothing.
    refused = refused or any(isinstance(cause, ReadOnlyError) for cause in _chain(exc))
    not_sent = any(isinstance(cause, _NOT_SENT) for cause in _chain(exc))
    what = "did not answer in time" if isinstance(exc, RedisTimeoutError) else "failed"
    if opening and any(isinstance(c, RedisConnectionError) and _hung_up(c) for c in _chain(exc)):
        detail += (
            " (during the handshake: are the nodes Redis servers, and do they want TLS (ssl=true)?)"
            if isinstance(exc, RedisClusterException)
            else f" (during the handshake: is it a Redis server, and does it want {tls_hint}?)"
        )
    return StoreUnavailableError(
        f"{prefix}{where} {what}: {detail}",
        session_id=session_id,
        may_have_landed=write and not refused and not not_sent,
    )


def misconfiguration(exc: BaseException, *, opening: bool = False) -> str | None:
    """Why retrying cannot fix ``exc`` (or what it was raised from), or ``None`` if it might."""
    for cause in _chain(exc):
        message = str(cause)
        if isinstance(cause, ssl.SSLError):
            return "TLS failed"
        if isinstance(cause, _AUTH):
            return "authentication failed"
        if isinstance(cause, NoPermissionError):
            return "the user may not run a command the store needs (ACL)"
        if isinstance(cause, InvalidResponse):
            return "the server does not speak the Redis protocol"
        if "DB index is out of range" in message:
            return "no such database"
        if "Cluster mode is not enabled" in message:
            return "the server is not a Redis Cluster (use redis://)"
        if isinstance(cause, MovedError):
            return "the server is a Redis Cluster node (use redis+cluster://)"
    if (
        opening
        and isinstance(exc, ResponseError)
        and not isinstance(exc, BusyLoadingError)
        and not any(m in str(exc) for m in _BUSY)
    ):
        return "the server refused a connection setting"
    return None


def _hung_up(exc: BaseException) -> bool:
    return any(m in str(exc) for m in _HUNG_UP)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
