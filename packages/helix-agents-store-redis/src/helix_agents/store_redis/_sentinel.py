"""``redis+sentinel://`` URLs: a client on the master the Sentinels name (docs/scaling.md, FO-1).

``redis+sentinel://[user:password@]host:port[,host:port...]/<master name>[/<db>]?...``:
the userinfo authenticates to the master; ``sentinel_username``/``sentinel_password``
to the Sentinels; ``ssl`` and the ``ssl_*`` options go to both (``sentinel_ssl``
overrides ``ssl`` for the Sentinels); any other query option goes to the master's
connections. Each new connection asks the Sentinels where the master is, so a
client finds a promoted master by itself (FO-2). When no Sentinel named the master,
:func:`sentinel_failure` asks each one again to find out why (TLS, a password).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import URL_QUERY_ARGUMENT_PARSERS, to_bool
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

from helix_agents.core import ValidationError

from ._errors import DRIVER_ERRORS, misconfiguration

__all__ = [
    "SENTINEL_PORT",
    "SENTINEL_SCHEME",
    "close_sentinels",
    "sentinel_client",
    "sentinel_failure",
    "sentinel_managed",
]

SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_PORT = 26379
_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# Options for the Sentinels' connections as well as the master's.
_SHARED_TLS = ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs")
_SENTINEL_AUTH = {"sentinel_username": "username", "sentinel_password": "password"}


def sentinel_client(url: str, settings: dict[str, Any], shown: str) -> Redis:
    """A client of the master that the URL's Sentinels name; opens nothing.

    ``settings`` are the store's connection settings (timeouts, no retries, keyword
    options), which URL options do not override.
    """
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    sentinels = [_address(host, shown) for host in hosts.split(",") if host]
    if not sentinels:
        raise ValidationError(f"Sentinel URL {shown!r} names no Sentinel host:port")
    name, db = _path(parts.path, shown)
    master: dict[str, Any] = {}
    if userinfo:
        user, _, password = userinfo.partition(":")
        master["username"] = unquote(user) or None
        master["password"] = unquote(password) or None
    if db:
        master["db"] = db
    sentinel: dict[str, Any] = {}
    sentinel_ssl: bool | None = None
    for option, value in parse_qsl(parts.query, keep_blank_values=True):
        if option in _SENTINEL_AUTH:
            sentinel[_SENTINEL_AUTH[option]] = value
        elif option == "sentinel_ssl":
            sentinel_ssl = _flag(option, value, shown)
        elif option == "ssl":
            master["ssl"] = _flag(option, value, shown)
        else:
            master[option] = _typed(option, value, shown)
    master.update(settings)
    # One connection per Sentinel, shared by every lookup of the master (each one short
    # command): many tasks reconnecting at once open no burst of connections to them.
    sentinel["single_connection_client"] = True
    for option in ("socket_timeout", "socket_connect_timeout", "retry", "decode_responses"):
        sentinel[option] = settings[option]
    if sentinel_ssl is None:
        sentinel_ssl = bool(master.get("ssl"))
    if sentinel_ssl:
        sentinel["ssl"] = True
        sentinel.update({k: master[k] for k in _SHARED_TLS if k in master})
    manager = Sentinel(sentinels, sentinel_kwargs=sentinel)  # type: ignore[no-untyped-call]
    client: Redis = manager.master_for(name, **master)
    # Connection options are only used when a connection is made: make one (no I/O) to check.
    pool = client.connection_pool
    pool.connection_class(**pool.connection_kwargs)
    for each in manager.sentinels:
        sentinel_pool = each.connection_pool
        sentinel_pool.connection_class(**sentinel_pool.connection_kwargs)
    return client


def sentinel_managed(client: Redis | RedisCluster) -> bool:
    """Whether ``client`` finds its master through Sentinels."""
    return isinstance(client, Redis) and isinstance(client.connection_pool, SentinelConnectionPool)


async def close_sentinels(client: Redis | RedisCluster) -> None:
    """Close the Sentinel clients behind ``client``, if it is a Sentinel-managed one."""
    if isinstance(client, Redis) and isinstance(client.connection_pool, SentinelConnectionPool):
        await client.connection_pool.sentinel_manager.aclose()


async def sentinel_failure(client: Redis | RedisCluster) -> tuple[str, BaseException] | None:
    """Why the Sentinels behind ``client`` named no master, when they fail to answer: the
    ``host:port`` and the error of the first Sentinel that refuses for a reason retrying
    cannot fix (TLS, authentication), else of the first one, if none answers; else ``None``.

    redis-py's lookup folds each Sentinel's error into one ``MasterNotFoundError`` message:
    a PING on each Sentinel client gets the error itself, with its cause.
    """
    if not (
        isinstance(client, Redis) and isinstance(client.connection_pool, SentinelConnectionPool)
    ):
        return None
    sentinels = client.connection_pool.sentinel_manager.sentinels
    failures: list[tuple[str, BaseException]] = []
    for sentinel in sentinels:
        try:
            await sentinel.ping()
        except DRIVER_ERRORS as exc:
            settings = sentinel.connection_pool.connection_kwargs
            failures.append((f"{settings.get('host')}:{settings.get('port')}", exc))
    refused = [f for f in failures if misconfiguration(f[1], opening=True) is not None]
    if refused:
        return refused[0]
    return failures[0] if failures and len(failures) == len(sentinels) else None


def _address(host_port: str, shown: str) -> tuple[str, int]:
    host, sep, port = host_port.rpartition(":")
    if not sep or host.endswith(":"):
        host, port = host_port, str(SENTINEL_PORT)
    if host and port.isascii() and port.isdigit() and 0 < int(port) < 65536:
        return host.strip("[]"), int(port)
    raise ValidationError(f"Sentinel URL {shown!r}: {host_port!r} is not host:port")


def _path(path: str, shown: str) -> tuple[str, int]:
    """The master name and the database number of ``/<master name>[/<db>]``."""
    name, _, db = unquote(path).strip("/").partition("/")
    if not name:
        raise ValidationError(
            f"Sentinel URL {shown!r} names no master: "
            "use redis+sentinel://host:port[,host:port...]/<master name>[/<db>]"
        )
    if db and not (db.isascii() and db.isdigit()):
        raise ValidationError(f"Sentinel URL {shown!r}: {db!r} is not a database number")
    return name, int(db or 0)


def _flag(option: str, value: str, shown: str) -> bool:
    flag = _FLAGS.get(value.lower())
    if flag is None:
        raise ValidationError(f"Sentinel URL {shown!r}: {option}={value!r} is not true or false")
    return flag


def _typed(option: str, value: str, shown: str) -> Any:
    parse = URL_QUERY_ARGUMENT_PARSERS.get(option)
    if parse is None:
        return value
    if parse is to_bool:
        return _flag(option, value, shown)
    try:
        return parse(value)
    except (TypeError, ValueError):
        pass
    raise ValidationError(f"Sentinel URL {shown!r}: option {option}={value!r} is not valid")
