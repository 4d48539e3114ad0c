"""Versioned migrations: many processes at once, checksums, unknown versions, caller connections."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from helix_agents.core import ChatMessage, MessageCommit, StateStoreError
from helix_agents.store_postgres import MigrationError, PoolSettings, PostgresStateStore, migrate
from helix_agents.store_postgres._migrations import migrations

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("postgres_child.py")
SMALL_POOL = PoolSettings(min_size=1, max_size=2)
TABLES = {
    "__agents_sessions",
    "__agents_messages",
    "__agents_runs",
    "__agents_queued",
    "__agents_approvals",
    "__agents_checkpoints",
    "__agents_commits",
    "__agents_outputs",
    "__agents_compactions",
    "__agents_archive",
    "__agents_scoped",
    "__agents_migrations",
}


def _applied(pg_url: str, schema: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            sql.SQL(
                "SELECT version, name, checksum FROM {}.__agents_migrations ORDER BY version"
            ).format(sql.Identifier(schema))
        ).fetchall()
    return [(int(v), str(n), str(c)) for v, n, c in rows]


def _tables(pg_url: str, schema: str) -> set[str]:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", [schema]
        ).fetchall()
    return {str(name) for (name,) in rows}


def _expected() -> list[tuple[int, str, str]]:
    return [(m.version, m.name, m.checksum) for m in migrations()]


def _kill_if_running(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        child.kill()


def test_many_processes_migrate_an_empty_schema_once(pg_url: str, schema: str) -> None:
    """Six processes released together: one applies every migration, the rest find nothing."""
    with contextlib.ExitStack() as stack:
        children = [
            stack.enter_context(
                subprocess.Popen(
                    [sys.executable, str(CHILD), pg_url, schema],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            for _ in range(6)
        ]
        for child in children:
            stack.callback(_kill_if_running, child)
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outcomes = []
        for child in children:
            out, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
            outcomes.append(json.loads(out))
    everything = [m.version for m in migrations()]
    assert sorted(outcomes) == [[]] * 5 + [everything]
    assert _applied(pg_url, schema) == _expected()
    assert _tables(pg_url, schema) == TABLES


async def test_migrated_schema_works_and_store_checks_it(
    open_store: Any, pg_url: str, migrated: str
) -> None:
    """A store opens on a migrated schema; migrate() again applies nothing."""
    async with open_store() as store:
        await store.migrate()  # nothing to apply
        assert _applied(pg_url, migrated) == _expected()
        await store.create_session("s")
        done = await store.append_messages(
            "s", MessageCommit(messages=(ChatMessage(role="user", content="hi"),))
        )
        assert done.message_count == 1


async def test_unmigrated_schema_refuses_to_open_unless_auto_migrate(
    pg_url: str, schema: str
) -> None:
    """Without auto_migrate a missing schema is a MigrationError; with it, the store migrates."""
    with pytest.raises(MigrationError) as caught:
        async with PostgresStateStore(pg_url, schema=schema, pool_settings=SMALL_POOL):
            pass
    assert caught.value.code == "state_migration"
    assert not caught.value.retryable
    assert "migrate" in str(caught.value)
    async with PostgresStateStore(
        pg_url, schema=schema, pool_settings=SMALL_POOL, auto_migrate=True
    ) as store:
        await store.create_session("s")
    assert _applied(pg_url, schema) == _expected()


@pytest.mark.parametrize("tamper", ["changed", "unknown"])
async def test_changed_or_unknown_migration_refuses_to_start(
    pg_url: str, migrated: str, tamper: str
) -> None:
    """A checksum that differs, or a version this package lacks, stops open and migrate."""
    table = sql.Identifier(migrated, "__agents_migrations")
    first = migrations()[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        if tamper == "changed":
            conn.execute(
                sql.SQL("UPDATE {} SET checksum = 'tampered' WHERE version = %s").format(table),
                [first.version],
            )
        else:
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (version, name, checksum) VALUES (999, '0999_future.sql', 'x')"
                ).format(table)
            )
    for auto_migrate in (False, True):
        with pytest.raises(MigrationError) as caught:
            async with PostgresStateStore(
                pg_url, schema=migrated, pool_settings=SMALL_POOL, auto_migrate=auto_migrate
            ):
                pass
        assert ("999" if tamper == "unknown" else first.name) in str(caught.value)
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        with pytest.raises(MigrationError):
            await migrate(conn, migrated)


@pytest.mark.parametrize("autocommit", [True, False])
async def test_migrate_commits_on_autocommit_and_transactional_connections(
    pg_url: str, schema: str, autocommit: bool
) -> None:
    """migrate() commits its own transaction whichever mode the caller's connection is in."""
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=autocommit) as conn:
        assert await migrate(conn, schema) == [m.version for m in migrations()]
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        cur = await conn.execute("SHOW search_path")
        assert (await cur.fetchone()) != (f'"{schema}"',)  # the caller's path is restored
    assert _applied(pg_url, schema) == _expected()


async def test_migrate_inside_a_callers_transaction_joins_it(pg_url: str, schema: str) -> None:
    """Inside an open transaction migrate() uses a savepoint; the caller's rollback undoes it."""
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        await conn.execute("SELECT 1")
        assert await migrate(conn, schema) == [m.version for m in migrations()]
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        await conn.rollback()
    assert _tables(pg_url, schema) == set()


async def test_driver_errors_while_migrating_are_wrapped(pg_url: str) -> None:
    """A failure inside migrate() is a StateStoreError, never a psycopg exception."""
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        await conn.execute("SET lock_timeout = '1ms'")
        async with await psycopg.AsyncConnection.connect(pg_url) as other:
            await other.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                ["helix_agents.store_postgres:locked_schema"],
            )
            with pytest.raises(StateStoreError) as caught:
                await migrate(conn, "locked_schema")
            assert caught.value.code == "state_unavailable"
            assert caught.value.may_have_landed is False  # type: ignore[attr-defined]
