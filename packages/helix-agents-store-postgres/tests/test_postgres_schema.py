"""The public schema helpers: where a URL points, and the migrations a schema lacks."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from helix_agents.core import ValidationError
from helix_agents.store_postgres import (
    MigrationError,
    conninfo_and_schema,
    migrate,
    migration_names,
    pending_migrations,
)

pytestmark = pytest.mark.anyio


def test_conninfo_and_schema_take_the_store_options_out() -> None:
    conninfo, schema = conninfo_and_schema(
        "postgresql://app:pw@db/agents?schema=s1&max_size=4&sslmode=require"
    )
    assert schema == "s1"
    assert "max_size" not in conninfo and "schema" not in conninfo
    assert "sslmode=require" in conninfo
    assert conninfo_and_schema("postgresql://db/agents")[1] == "public"
    with pytest.raises(ValidationError):
        conninfo_and_schema("postgresql://db/agents?schema=pg_catalog")


async def test_pending_then_migrated(pg_url: str, schema: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        assert await pending_migrations(conn, schema) == migration_names()
        exists = await conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = %s", [schema]
        )
        assert await exists.fetchone() == (0,), "reading the pending migrations created the schema"
        await migrate(conn, schema)
        assert await pending_migrations(conn, schema) == []


async def test_an_unknown_applied_migration_is_refused(pg_url: str, schema: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        await migrate(conn, schema)
        await conn.execute(
            sql.SQL(
                "INSERT INTO {}.__agents_migrations (version, name, checksum) "
                "VALUES (999, 'x', 'y')"
            ).format(sql.Identifier(schema))
        )
        with pytest.raises(MigrationError):
            await pending_migrations(conn, schema)
