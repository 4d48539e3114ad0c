"""Opening a store: the first connection, its failure named, and TLS checked before it waits."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import SSLConnection
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import MasterNotFoundError
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError

from helix_agents.core import ValidationError
from helix_agents.core.errors import StoreMisconfiguredError

from ._client import OPTION_ERRORS
from ._errors import DRIVER_ERRORS, driver_error
from ._scripts import Scripts
from ._sentinel import sentinel_failure, sentinel_managed
from ._wait import ReplicaWait

__all__ = ["open_scripts"]

# A TLS handshake to a plain Redis never ends: the server waits for a line that never
# comes. If the handshake has not finished after this long, ask in plain text.
_PROBE_AFTER = 0.25
_TLS_FILES = ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile")


async def open_scripts(
    client: Redis | RedisCluster, where: str, wait: ReplicaWait | None = None
) -> Scripts:
    """Connect and load every script; a failure raises the core error that names its cause."""
    tls = _tls_settings(client)
    if tls is not None:
        _check_tls_files(tls, where)
    scripts = Scripts(client, wait)
    loading = asyncio.ensure_future(scripts.load())
    probe: asyncio.Future[bool] | None = None
    try:
        # A Sentinel-managed client's master address is the Sentinels' to give: no probe.
        if tls is not None and not sentinel_managed(client):
            await asyncio.wait((loading,), timeout=_PROBE_AFTER)
            if not loading.done():
                probe = asyncio.ensure_future(_speaks_plain_redis(tls))
                await asyncio.wait((loading, probe), return_when=asyncio.FIRST_COMPLETED)
                if not loading.done() and probe.result():
                    raise StoreMisconfiguredError(
                        f"{where} refused the store: TLS failed: the server answers plain "
                        "Redis, not TLS (use redis://, or enable tls-port on the server)"
                    )
        await loading
    except DRIVER_ERRORS as exc:
        found = await sentinel_failure(client) if isinstance(exc, MasterNotFoundError) else None
        if found is not None:
            # The Sentinel's own error (a TLS or password failure, ...), not redis-py's summary.
            address, cause = found
            raise driver_error(
                cause,
                None,
                write=False,
                where=f"{where}: Sentinel {address}",
                opening=True,
                tls_hint="TLS (ssl=true or sentinel_ssl=true)",
            ) from cause
        raise driver_error(exc, None, write=False, where=where, opening=True) from exc
    except OPTION_ERRORS as exc:
        # A redis-py option of the wrong type or value, found by the first connection.
        raise ValidationError(
            f"{where}: an option given to redis-py is not valid: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        for task in (loading, probe):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
    return scripts


def _tls_settings(client: Redis | RedisCluster) -> dict[str, Any] | None:
    """The connection settings of a TLS client (a cluster's: of its first node), else ``None``."""
    if isinstance(client, RedisCluster):
        first = next(iter(client.nodes_manager.startup_nodes.values()))
        settings = {**client.connection_kwargs, "host": first.host, "port": first.port}
    else:
        settings = dict(client.connection_pool.connection_kwargs)
        settings["connection_class"] = client.connection_pool.connection_class
    if not issubclass(settings.pop("connection_class", type(None)), SSLConnection):
        return None
    return settings


def _check_tls_files(settings: dict[str, Any], where: str) -> None:
    for name in _TLS_FILES:
        path = settings.get(name)
        if path is not None and not os.path.exists(path):
            raise StoreMisconfiguredError(
                f"{where} refused the store: TLS failed: {name} {path!r} does not exist"
            )


async def _speaks_plain_redis(settings: dict[str, Any]) -> bool:
    """Whether the server answers a plain-text PING as Redis does (so it is not TLS): asked
    through a plain redis-py client of the store's own, which sends no credentials."""
    host, port = settings.get("host", "localhost"), settings.get("port", 6379)
    timeout = settings.get("socket_connect_timeout") or 1.0
    probe = Redis(
        host=host,
        port=port,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        await probe.ping()
    except ResponseError:  # NOAUTH, DENIED, ...: a Redis reply all the same
        return True
    except Exception:
        return False
    finally:
        await probe.aclose()
    return True
