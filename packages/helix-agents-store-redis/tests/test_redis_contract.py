"""The whole contract suite on standalone Redis and on a three-master Redis Cluster.

Two instances from one factory are two stores with two clients (two
connection pools) on the same keys, so the multi-writer rules (EMC-2, IDEM-3,
APR-2, RUN-5) race through separate connections.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from helix_agents.contract import Capabilities, SessionStoreContract, StoreFactory
from helix_agents.store_redis import RedisStateStore


class TestRedisContract(SessionStoreContract):
    """Every rule id against a standalone Redis server."""

    # idle_ttl is Redis's own, on server time (test_redis_ttl.py); sessions' own TTLs are core's.
    capabilities = Capabilities(clock_idle_ttl=False)

    @pytest.fixture
    def store_factory(self, standalone_factory: Callable[..., RedisStateStore]) -> StoreFactory:
        return standalone_factory


class TestRedisClusterContract(SessionStoreContract):
    """Every rule id against a Redis Cluster of three masters started from redis-server."""

    capabilities = Capabilities(clock_idle_ttl=False)

    @pytest.fixture
    def store_factory(self, cluster_factory: Callable[..., RedisStateStore]) -> StoreFactory:
        return cluster_factory
