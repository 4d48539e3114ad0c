"""``migrate``: the schema versions a SQLite file or Postgres schema lacks, and applying them.

Built on the migration helpers of the SQLite and Postgres packages
(docs/backends/sqlite.md, docs/backends/postgres.md); memory and Redis stores
keep no schema, so they have nothing to migrate.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helix_agents.core import StoreUnavailableError, ValidationError, redact_url

from ._render import out_console, print_json

__all__ = ["migrate_store"]


@dataclass
class Plan:
    """What ``migrate`` found and did."""

    backend: str
    location: str
    pending: list[str] = field(default_factory=list)
    applied_now: list[str] = field(default_factory=list)
    note: str | None = None


def _sqlite(url: str, dry_run: bool) -> Plan:
    from helix_agents.store_sqlite._config import parse_url
    from helix_agents.store_sqlite._migrations import (
        apply_migrations,
        pending_migrations,
        shipped_migrations,
    )

    path, _ = parse_url(url)
    plan = Plan("sqlite", path)
    shipped = shipped_migrations()
    if not Path(path).exists():
        plan.pending = [m.name for m in shipped]
        plan.note = "a new file: every migration is pending"
        if dry_run:
            return plan
    try:
        db = sqlite3.connect(path, isolation_level=None)
        try:
            pending = pending_migrations(db, path, shipped)
            plan.pending = [m.name for m in pending]
            if pending and not dry_run:
                apply_migrations(db, path, shipped)
                plan.applied_now = plan.pending
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot migrate SQLite file {path!r}: {exc}") from None
    return plan


async def _postgres(url: str, dry_run: bool) -> Plan:
    import psycopg
    from psycopg.rows import tuple_row

    from helix_agents.store_postgres import migrate
    from helix_agents.store_postgres._config import split_url, valid_schema
    from helix_agents.store_postgres._migrations import (
        check_applied,
        function_files,
        read_applied,
        read_functions,
    )

    conninfo, options = split_url(url)
    schema = valid_schema(options.get("schema", "public"))
    plan = Plan("postgresql", f"{redact_url(conninfo)} schema {schema!r}")
    try:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot connect to PostgreSQL at {redact_url(url)!r}: {exc}"
        ) from None
    async with conn:
        async with conn.cursor(row_factory=tuple_row) as cur:
            pending = check_applied(schema, await read_applied(cur, schema))
            recorded = await read_functions(cur, schema) or {}
        # Function files are re-applied when their text differs from the recorded one.
        changed = [
            f"functions/{f.name}" for f in function_files() if recorded.get(f.name) != f.checksum
        ]
        plan.pending = [m.name for m in pending] + changed
        if plan.pending and not dry_run:
            applied = set(await migrate(conn, schema))
            plan.applied_now = [m.name for m in pending if m.version in applied] + changed
    return plan


async def _plan(url: str, scheme: str, dry_run: bool) -> Plan:
    if scheme == "sqlite":
        return _sqlite(url, dry_run)
    if scheme in ("postgresql", "postgres"):
        return await _postgres(url, dry_run)
    if scheme in ("memory", "redis", "rediss", "redis+cluster"):
        return Plan(
            scheme, redact_url(url), note=f"{scheme}:// stores keep no schema: nothing to do"
        )
    raise ValidationError(f"cannot migrate {redact_url(url)!r}: unknown store URL scheme")


async def migrate_store(url: str, *, dry_run: bool, as_json: bool) -> None:
    """Show the pending migrations of the store at ``url`` and, unless ``dry_run``, apply them."""
    scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    try:
        plan = await _plan(url, scheme, dry_run)
    except ModuleNotFoundError as exc:
        dist = "helix-agents-store-sqlite" if scheme == "sqlite" else "helix-agents-store-postgres"
        raise ValidationError(
            f"no store is installed for {scheme}:// URLs ({exc.name} is missing): "
            f"pip install {dist}"
        ) from None
    if as_json:
        data: dict[str, Any] = {**plan.__dict__, "dry_run": dry_run}
        print_json(data)
        return
    console = out_console()
    console.print(f"{plan.backend} {plan.location}", soft_wrap=True)
    if plan.note:
        console.print(plan.note)
    if not plan.pending and plan.backend in ("sqlite", "postgresql"):
        console.print("up to date: no pending migrations")
    for name in plan.pending:
        state = "applied" if name in plan.applied_now else "pending"
        console.print(f"  {state:<8} {name}")
    if plan.pending and dry_run:
        console.print("dry run: nothing applied")
