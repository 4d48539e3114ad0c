"""``migrate``: the schema versions a SQLite file or Postgres schema lacks, and applying them.

Built on the public schema helpers of the SQLite and Postgres packages
(docs/backends/sqlite.md, docs/backends/postgres.md); memory and Redis stores
keep no schema, so they have nothing to migrate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helix_agents.core import StoreUnavailableError, ValidationError
from helix_agents.core.backend import redact_url

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
    from helix_agents.store_sqlite import database_file, migrate, pending_migrations

    path = database_file(url)
    plan = Plan("sqlite", path, pending=pending_migrations(path))
    if not Path(path).exists():
        plan.note = "a new file: every migration is pending"
    if plan.pending and not dry_run:
        plan.applied_now = migrate(path)
    return plan


async def _postgres(url: str, dry_run: bool) -> Plan:
    import psycopg

    from helix_agents.store_postgres import conninfo_and_schema, migrate, pending_migrations

    conninfo, schema = conninfo_and_schema(url)
    plan = Plan("postgresql", f"{redact_url(conninfo)} schema {schema!r}")
    try:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot connect to PostgreSQL at {redact_url(url)!r}: {exc}"
        ) from None
    async with conn:
        plan.pending = await pending_migrations(conn, schema)
        if plan.pending and not dry_run:
            applied = set(await migrate(conn, schema))
            # Function files carry no version; migrate applies every changed one.
            plan.applied_now = [
                name
                for name in plan.pending
                if name.startswith("functions/") or int(name.split("_", 1)[0]) in applied
            ]
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
