"""The redis-py client a URL describes, built and checked before it connects anywhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import URL_QUERY_ARGUMENT_PARSERS, to_bool
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from helix_agents.core import ValidationError
from helix_agents.core.backend import check_userinfo, redact_url

from ._config import STORE_QUERY, Timeouts, refuse_renamed
from ._sentinel import SENTINEL_SCHEME, sentinel_client

__all__ = ["CLUSTER_SCHEME", "OPTION_ERRORS", "build_client", "describe", "is_cluster_url"]

CLUSTER_SCHEME = "redis+cluster"
# What redis-py raises for an option of the wrong type or value.
OPTION_ERRORS = (TypeError, ValueError, OverflowError, AttributeError, LookupError)
_DB_PATH = re.compile(r"/?(?:\d+)?")
# ``ssl=`` of a cluster URL: redis-py would pass the string on, and "false" is truthy.
_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
_UNKNOWN = re.compile(r"unexpected keyword argument '([^']*)'")
_PROTOCOLS = ("2", "3")
T = TypeVar("T")


def build_client(url: str, timeouts: Timeouts, options: dict[str, Any]) -> Redis | RedisCluster:
    """A client for ``redis://``, ``rediss://``, ``unix://``, ``redis+cluster://h:p,h:p``
    or ``redis+sentinel://h:p,h:p/<master name>``.

    Opens nothing. Every option is checked here, so a bad one is a
    ValidationError now rather than an error at the first call. The client
    never retries a command on its own: a write whose reply was lost must
    surface, so the caller can retry it knowingly (with a commit id).
    """
    refuse_renamed(options)
    check_userinfo(url)
    settings: dict[str, Any] = {
        "decode_responses": True,
        "retry": Retry(NoBackoff(), 0),
        "socket_timeout": timeouts.operation,
        "socket_connect_timeout": timeouts.connect,
        **options,
    }
    shown = describe(url)
    parts = _checked(lambda: urlsplit(url), shown)
    _check_query(parts.query, shown)
    scheme = parts.scheme.lower()
    if scheme in ("redis", "rediss", "unix"):
        if scheme != "unix":
            _check_address(parts.netloc, parts.path, shown)
        return _checked(lambda: _standalone(url, settings), shown)
    if scheme == SENTINEL_SCHEME:
        return _checked(lambda: sentinel_client(url, settings, shown), shown)
    if scheme != CLUSTER_SCHEME:
        raise ValidationError(f"not a Redis URL: {shown!r}")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    nodes = [_node(host, shown) for host in hosts.split(",") if host]
    if not nodes:
        raise ValidationError(f"cluster URL {shown!r} names no host:port")
    netloc = f"{userinfo}@{nodes[0].host}:{nodes[0].port}" if userinfo else nodes[0].name
    query = _cluster_tls(parts.query, settings, shown)
    first = urlunsplit(("redis", netloc, parts.path, query, ""))
    return _checked(lambda: RedisCluster.from_url(first, startup_nodes=nodes, **settings), shown)


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` is a ``redis+cluster://`` URL."""
    return url.partition(":")[0].lower() == CLUSTER_SCHEME


def describe(url: str) -> str:
    """``url`` as messages show it: no credentials, no query (it may hold secrets too)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_url(url.partition("?")[0])
    user = "***@" if "@" in parts.netloc else ""
    return urlunsplit((parts.scheme, user + parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _standalone(url: str, settings: dict[str, Any]) -> Redis:
    client = Redis.from_url(url, **settings)
    # Connection options are only used when a connection is made; make one (no I/O) to check them.
    pool = client.connection_pool
    pool.connection_class(**pool.connection_kwargs)
    return client


def _cluster_tls(query: str, settings: dict[str, Any], shown: str) -> str:
    """The query without ``ssl=``, whose flag goes to ``settings`` unless a keyword set it."""
    pairs = parse_qsl(query, keep_blank_values=True)
    for name, value in pairs:
        if name == "ssl":
            flag = _FLAGS.get(value.lower())
            if flag is None:
                raise ValidationError(f"cluster URL {shown!r}: ssl={value!r} is not true or false")
            settings.setdefault("ssl", flag)
    return urlencode([(name, value) for name, value in pairs if name != "ssl"])


def _check_query(query: str, shown: str) -> None:
    """The values redis-py reads loosely (any text but "no" is true) or checks only when it
    connects (``protocol``)."""
    for name, value in parse_qsl(query, keep_blank_values=True):
        if URL_QUERY_ARGUMENT_PARSERS.get(name) is to_bool and value.lower() not in _FLAGS:
            raise ValidationError(
                f"Redis URL {shown!r}: option {name}={value!r} is not true or false"
            )
        if name == "protocol" and value not in _PROTOCOLS:
            raise ValidationError(f"Redis URL {shown!r}: option protocol={value!r} is not 2 or 3")


def _checked(build: Callable[[], T], shown: str) -> T:
    try:
        return build()
    # RedisError: redis-py's own check of an option's value (ssl_cert_reqs), made with no I/O.
    except (*OPTION_ERRORS, RedisError) as exc:
        unknown = _UNKNOWN.search(str(exc)) if isinstance(exc, TypeError) else None
        reason = (
            f"unknown option {unknown.group(1)!r} (neither the store's: "
            f"{', '.join(STORE_QUERY)}, nor a redis-py connection option)"
            if unknown
            else str(exc) or type(exc).__name__
        )
    # Raised outside the handler: nothing of the URL is kept in the chain.
    raise ValidationError(f"Redis store options for {shown!r} are not valid: {reason}")


def _check_address(netloc: str, path: str, shown: str) -> None:
    """The port and the db path of a ``redis://`` URL, which redis-py would drop or misread."""
    hostport = netloc.rpartition("@")[2]
    port = "" if hostport.endswith("]") else hostport.rpartition(":")[2] if ":" in hostport else ""
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise ValidationError(f"Redis URL {shown!r}: port {port!r} is not a port number")
    if not _DB_PATH.fullmatch(unquote(path)):
        raise ValidationError(
            f"Redis URL {shown!r}: the path {unquote(path)!r} is not a database number (/0)"
        )


def _node(host_port: str, shown: str) -> ClusterNode:
    host, sep, port = host_port.rpartition(":")
    if not sep or host.endswith(":"):
        host, port = host_port, "6379"
    if port.isdigit() and 0 < int(port) < 65536:
        return ClusterNode(host.strip("[]"), int(port))
    raise ValidationError(f"cluster URL {shown!r}: {host_port!r} is not host:port")
