"""Servers for tests, found the same way by every package of the workspace.

Each finder tries, in order (CONTRIBUTING.md), and stops at the first that has one:

1. its env URL (``HELIX_POSTGRES_URL``, ``HELIX_REDIS_URL``,
   ``HELIX_REDIS_CLUSTER_URL``) — when set, it is the only place tried;
2. a server on the local default port (Postgres 5432, Redis 6379);
3. local server binaries (``initdb``/``postgres``, ``redis-server``/``redis-cli``),
   started in a temporary directory on a free loopback port;
4. a Docker container through testcontainers (the ``containers`` dependency
   group), only when a Docker engine answers (Postgres and Redis);

and otherwise gives a :class:`Search` whose ``reason`` names every place tried
and what it answered. :func:`require` turns that into a skip, or a failure under
``HELIX_REQUIRE_BACKENDS=1``. The fixtures of :mod:`.fixtures` (a pytest plugin)
wrap the finders per test session. Drivers and testcontainers are imported only
when a finder needs them.

For failover tests, :class:`SentinelGroup` (a Redis master, its replica, three
Sentinels) and :func:`start_pair` (a PostgreSQL primary and its hot standby,
``pg_basebackup -R``) start servers of a test's own from local binaries.
"""

from ._docker import POSTGRES_IMAGE, REDIS_IMAGE, docker_answers, docker_host
from ._pg_standby import PostgresPair, start_pair
from ._postgres import (
    POSTGRES_ENV,
    POSTGRES_URLS,
    Server,
    TLSFiles,
    answers,
    find_postgres,
    free_port,
    start_server,
    wait_for,
)
from ._redis import (
    REDIS_CLUSTER_ENV,
    REDIS_ENV,
    REDIS_URLS,
    RedisServers,
    RedisTlsFiles,
    find_redis,
    find_redis_cluster,
    redis_answers,
    start_cluster,
)
from ._search import Attempt, Outcome, Search, Step, require, search
from ._sentinel import SentinelGroup

__all__ = [
    "POSTGRES_ENV",
    "POSTGRES_IMAGE",
    "POSTGRES_URLS",
    "REDIS_CLUSTER_ENV",
    "REDIS_ENV",
    "REDIS_IMAGE",
    "REDIS_URLS",
    "Attempt",
    "Outcome",
    "PostgresPair",
    "RedisServers",
    "RedisTlsFiles",
    "Search",
    "SentinelGroup",
    "Server",
    "Step",
    "TLSFiles",
    "answers",
    "docker_answers",
    "docker_host",
    "find_postgres",
    "find_redis",
    "find_redis_cluster",
    "free_port",
    "redis_answers",
    "require",
    "search",
    "start_cluster",
    "start_pair",
    "start_server",
    "wait_for",
]
