"""Store options and the redis-py client a URL describes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from helix_agents.core import ValidationError, check_limit

from ._keys import KeySpace

__all__ = ["CLUSTER_SCHEME", "StoreOptions", "connect", "split_store_options"]

CLUSTER_SCHEME = "redis+cluster"
# Options of the store itself; any other URL query argument goes to redis-py.
_STORE_QUERY = ("key_prefix", "idle_ttl", "max_messages")


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
            check_limit(None, "max_messages", max_messages, 1, 2**62)
        ttl_ms = 0
        if idle_ttl is not None:
            seconds = idle_ttl.total_seconds() if isinstance(idle_ttl, timedelta) else idle_ttl
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise ValidationError(f"idle_ttl {idle_ttl!r} is not a number of seconds")
            ttl_ms = round(seconds * 1000)
            if ttl_ms < 1:
                raise ValidationError(f"idle_ttl {idle_ttl!r} must be at least one millisecond")
        return cls(KeySpace.build(key_prefix, namespace), ttl_ms, max_messages)


def split_store_options(url: str) -> tuple[str, dict[str, Any]]:
    """The URL without the store's own query arguments, and those arguments, typed."""
    parts = urlsplit(url)
    ours: dict[str, Any] = {}
    rest = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name not in _STORE_QUERY:
            rest.append((name, value))
            continue
        try:
            ours[name] = (
                value
                if name == "key_prefix"
                else int(value)
                if name == "max_messages"
                else float(value)
            )
        except ValueError:
            raise ValidationError(f"store URL option {name}={value!r} is not a number") from None
    return urlunsplit(parts._replace(query=urlencode(rest))), ours


def connect(url: str, client_options: dict[str, Any]) -> Redis | RedisCluster:
    """A client for ``redis://``, ``rediss://`` or ``redis+cluster://h:p,h:p`` URLs.

    The client never retries a command on its own: a write whose reply was lost
    must surface, so the caller can retry it knowingly (with a commit id).
    """
    options: dict[str, Any] = {"decode_responses": True, "retry": Retry(NoBackoff(), 0)}
    options.update(client_options)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("redis", "rediss", "unix"):
        return Redis.from_url(url, **options)
    if scheme != CLUSTER_SCHEME:
        raise ValidationError(f"not a Redis URL: {url!r}")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    nodes = [_node(host, url) for host in hosts.split(",") if host]
    if not nodes:
        raise ValidationError(f"cluster URL {url!r} names no host:port")
    netloc = f"{userinfo}@{nodes[0].host}:{nodes[0].port}" if userinfo else nodes[0].name
    first = urlunsplit(("redis", netloc, parts.path, parts.query, ""))
    return RedisCluster.from_url(first, startup_nodes=nodes, **options)


def _node(host_port: str, url: str) -> ClusterNode:
    host, sep, port = host_port.rpartition(":")
    if not sep or host.endswith(":"):
        host, port = host_port, "6379"
    try:
        return ClusterNode(host.strip("[]"), int(port))
    except ValueError:
        raise ValidationError(f"cluster URL {url!r}: bad host:port {host_port!r}") from None
