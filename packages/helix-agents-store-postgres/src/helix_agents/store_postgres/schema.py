"""The schema of a Postgres store, for tools: where a URL points, and the migrations a
schema lacks, read without applying them (``helix-store migrate`` uses these)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row

from ._config import split_url, valid_schema
from ._migrations import check_applied, driver_errors, migrations, read_applied

__all__ = ["conninfo_and_schema", "migration_names", "pending_migrations"]


def conninfo_and_schema(url: str) -> tuple[str, str]:
    """The libpq URL a ``postgresql://`` store URL connects with (the store's own query
    options taken out) and the schema it keeps its tables in (``?schema=``, else ``public``).

    A malformed URL, option or schema is a :class:`~helix_agents.core.ValidationError`
    that never shows the password.
    """
    conninfo, options = split_url(url)
    return conninfo, valid_schema(options.get("schema", "public"))


def migration_names() -> list[str]:
    """The migrations this package ships (``0001_initial.sql``, …), by version."""
    return [m.name for m in migrations()]


async def pending_migrations(conn: AsyncConnection[Any], schema: str = "public") -> list[str]:
    """The shipped migrations ``schema`` lacks (every one for a schema that does not exist).

    Reads only. Raises :class:`~helix_agents.store_postgres.MigrationError` for a
    schema migrated by a newer package or whose applied migration changed, as
    opening a store would; a driver error is a ``StoreUnavailableError``.
    """
    schema = valid_schema(schema)
    with driver_errors(conn, f"reading the migrations of schema {schema!r}", sent_write=False):
        async with conn.cursor(row_factory=tuple_row) as cur:
            applied = await read_applied(cur, schema)
    return [m.name for m in check_applied(schema, applied)]
