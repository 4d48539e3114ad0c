"""``migrate``: the schema versions a store lacks, and applying them.

Asked of the store's engine (docs/backends/writing.md): a backend with a schema
(SQLite, PostgreSQL) names its pending migrations; memory and Redis stores keep
no schema, so they have nothing to migrate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helix_agents.core import open_store
from helix_agents.core.backend import StoreBase, redact_url

from ._progress import progress_bar
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


async def _plan(url: str, dry_run: bool) -> Plan:
    store = open_store(url)
    location = redact_url(url)
    if not isinstance(store, StoreBase):
        return Plan(type(store).__name__, location, note="this store names no schema")
    try:
        engine = store.engine
        plan = Plan(engine.system, engine.namespace or location)
        pending = await engine.pending_migrations()
        if pending is None:
            plan.note = f"{engine.system} stores keep no schema: nothing to do"
        elif pending and not dry_run:
            with progress_bar() as bar:
                task = bar.add_task("migrate", total=len(pending))
                await store.migrate()
                bar.update(task, completed=len(pending))
            plan.pending = plan.applied_now = list(pending)
        else:
            plan.pending = pending
        return plan
    finally:
        await store.close()


async def migrate_store(url: str, *, dry_run: bool, as_json: bool) -> None:
    """Show the pending migrations of the store at ``url`` and, unless ``dry_run``, apply them."""
    plan = await _plan(url, dry_run)
    if as_json:
        data: dict[str, Any] = {**plan.__dict__, "dry_run": dry_run}
        print_json(data)
        return
    console = out_console()
    console.print(f"{plan.backend} {plan.location}", soft_wrap=True)
    if plan.note:
        console.print(plan.note)
        return
    if not plan.pending:
        console.print("up to date: no pending migrations")
    for name in plan.pending:
        state = "applied" if name in plan.applied_now else "pending"
        console.print(f"  {state:<8} {name}")
    if plan.pending and dry_run:
        console.print("dry run: nothing applied")
