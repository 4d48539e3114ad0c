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

    url_fixture = "pg_url"

    @pytest.fixture
    def store_factory(
        self, request: pytest.FixtureRequest, store_on: Callable[..., PostgresStateStore]
    ) -> StoreFactory:
        return functools.partial(store_on, request.getfixturevalue(self.url_fixture))


class TestPostgresThroughPgBouncer(TestPostgresContract):
    """Every rule id through a PgBouncer in transaction pooling mode (no session state)."""

    url_fixture = "pgbouncer_url"
