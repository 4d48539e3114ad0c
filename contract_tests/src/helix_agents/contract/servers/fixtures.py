"""Session fixtures of the servers every package's tests share (a pytest plugin).

The repository's root ``conftest.py`` lists it in ``pytest_plugins``; outside the
repository, add ``-p helix_agents.contract.servers.fixtures``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from ._postgres import find_postgres
from ._redis import RedisServers, find_redis, find_redis_cluster
from ._search import require

__all__ = ["helix_postgres_url", "helix_redis_cluster_url", "helix_redis_url", "redis_servers"]


@pytest.fixture(scope="session")
def redis_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServers]:
    """Starts private ``redis-server`` processes on demand; stops them after the session."""
    servers = RedisServers(tmp_path_factory.mktemp("redis"))
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def helix_postgres_url() -> Iterator[str]:
    """A PostgreSQL server the tests may create schemas in (see :func:`find_postgres`)."""
    with ExitStack() as stack:
        yield require(find_postgres(stack))


@pytest.fixture(scope="session")
def helix_redis_url(redis_servers: RedisServers) -> Iterator[str]:
    """A standalone Redis the tests may write keys to (see :func:`find_redis`)."""
    with ExitStack() as stack:
        yield require(find_redis(stack, redis_servers))


@pytest.fixture(scope="session")
def helix_redis_cluster_url(redis_servers: RedisServers) -> Iterator[str]:
    """A three-master Redis Cluster (see :func:`find_redis_cluster`)."""
    with ExitStack() as stack:
        yield require(find_redis_cluster(stack, redis_servers))
