"""``migrate`` through the installed command: SQLite and Postgres have schemas, others do not."""

from __future__ import annotations

import json

import pytest

from helix_agents.store_postgres import migration_names as postgres_migrations
from helix_agents.store_sqlite import migration_names as sqlite_migrations

from .conftest import Helix


@pytest.mark.parametrize("backend", ["sqlite_url", "pg_url"])
def test_migrate_shows_applies_then_has_nothing_left(
    helix: Helix, backend: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(backend)
    names = sqlite_migrations() if backend == "sqlite_url" else postgres_migrations()
    dry = helix("migrate", url, "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert json.loads(dry.out)["pending"] == names and json.loads(dry.out)["applied_now"] == []
    again = json.loads(helix("migrate", url, "--dry-run", "--json").out)
    assert again["pending"] == names, "a dry run applied something"
    applied = helix("migrate", url)
    assert applied.code == 0 and all(f"applied  {name}" in applied.out for name in names)
    done = json.loads(helix("migrate", url, "--json").out)
    assert done["pending"] == [] and done["applied_now"] == []
    used = helix("sessions", url, "--user", "u", "--json")
    assert used.code == 0 and json.loads(used.out)["sessions"] == []


def test_an_unmigrated_postgres_schema_is_refused_until_migrated(helix: Helix, pg_url: str) -> None:
    before = helix("sessions", pg_url, "--user", "u")
    assert before.code == 5, before.err


def test_stores_without_a_schema_have_nothing_to_migrate(helix: Helix, redis_url: str) -> None:
    for url in ("memory://", redis_url):
        done = helix("migrate", url, "--json")
        assert done.code == 0 and "nothing to do" in json.loads(done.out)["note"]
