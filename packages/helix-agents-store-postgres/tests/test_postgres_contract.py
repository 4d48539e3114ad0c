"""The whole contract suite on PostgreSQL: directly, and through PgBouncer in transaction mode.

Each test gets a fresh schema; calling the factory twice gives two stores with
two separate pools on that schema, so the multi-writer rules (EMC-2, IDEM-3,
APR-2, RUN-5, the SES-8 race) run across pools.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.store_postgres import PostgresStateStore


class TestPostgresContract(SessionStoreContract):
    """Every rule id against ``PostgresStateStore`` on the server."""

    @pytest.fixture
    def store_factory(
        self, pg_url: str, store_on: Callable[..., PostgresStateStore]
    ) -> StoreFactory:
        return functools.partial(store_on, pg_url)


class TestPostgresThroughPgBouncer(TestPostgresContract):
    """Every rule id through a PgBouncer in transaction pooling mode (no session state), with
    the ``prepare`` option the docs give for its version."""

    @pytest.fixture
    def store_factory(
        self,
        pgbouncer_url: str,
        pgbouncer_prepare: str,
        store_on: Callable[..., PostgresStateStore],
    ) -> StoreFactory:
        return functools.partial(store_on, pgbouncer_url, prepare=pgbouncer_prepare)


class TestPostgresStandbyReads(TestPostgresContract):
    """Every rule id with ``standby=`` (FO-11): the writes' statements answer their transaction
    id and WAL position, the reads go to the second pool. The "standby" is the primary itself
    (not in recovery, so no read waits): what runs is every statement's tracked form."""

    @pytest.fixture
    def store_factory(
        self, pg_url: str, store_on: Callable[..., PostgresStateStore]
    ) -> StoreFactory:
        return functools.partial(store_on, pg_url, standby=pg_url)
