"""A schema migrated by the release before function files opens, and migrates forward cleanly.

That release applied the numbered migrations only (their function definitions
included) and kept no ``__agents_functions`` table. The numbered files are
frozen history, so applying them the way that release did rebuilds its schema.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from helix_agents.core import ChatMessage, MessageCommit, SessionInfo, StartRun
from helix_agents.core.refusals import REFUSALS
from helix_agents.store_postgres import MigrationError, PoolSettings, PostgresStateStore
from helix_agents.store_postgres._migrations import (
    _BEFORE_FUNCTION_FILES,
    function_files,
    migrations,
)

pytestmark = pytest.mark.anyio

SMALL_POOL = PoolSettings(min_size=1, max_size=2)
_DEFINED = re.compile(r"CREATE OR REPLACE FUNCTION (\w+)")


def _migrate_like_the_release_before(pg_url: str, schema: str) -> None:
    """What ``migrate()`` did before function files: each numbered file, recorded, in one go."""
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute("SELECT set_config('search_path', %s, true)", [f'"{schema}"'])
        conn.execute(
            "CREATE TABLE __agents_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for m in migrations():
            conn.execute(m.sql.encode())
            conn.execute(
                "INSERT INTO __agents_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                [m.version, m.name, m.checksum],
            )


def _definitions(pg_url: str, schema: str) -> dict[str, str]:
    """Each ``__agents_*`` function of ``schema`` as PostgreSQL prints it, schema name blanked."""
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = %s AND p.proname LIKE '\\_\\_agents\\_%%'",
            [schema],
        ).fetchall()
    return {str(name): str(text).replace(schema, "<schema>") for name, text in rows}


def _recorded(pg_url: str, schema: str) -> dict[str, str]:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            sql.SQL("SELECT name, checksum FROM {}.__agents_functions").format(
                sql.Identifier(schema)
            )
        ).fetchall()
    return {str(n): str(c) for n, c in rows}


@pytest.fixture
def legacy(pg_url: str, schema: str) -> str:
    """``schema``, as the release before function files migrated it."""
    _migrate_like_the_release_before(pg_url, schema)
    return schema


@pytest.fixture
def fresh(pg_url: str) -> Iterator[str]:
    """A second schema, migrated by this package from nothing."""
    name = f"helix_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


async def _migrate_fresh(pg_url: str, schema: str) -> None:
    async with PostgresStateStore(
        pg_url, schema=schema, pool_settings=SMALL_POOL, auto_migrate=True
    ):
        pass


def _write_like_the_release_before(pg_url: str, schema: str) -> None:
    """A session with one row, committed with id ``c1`` by the release's own function."""
    commit = (
        '{"run": null, "rewind": null, "fence": null, "expect": 0, "ci": [], "la": [], "id": "c1"}'
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.__agents_sessions"
                " (session_id, user_id, created_at, last_activity_at, metadata)"
                " VALUES ('s', 'u', now(), now(), '{{}}')"
            ).format(sql.Identifier(schema))
        )
        done = conn.execute(
            sql.SQL("SELECT {}.__agents_commit('s', %s::jsonb, %s::jsonb, now(), NULL)").format(
                sql.Identifier(schema)
            ),
            ['[{"role": "user", "content": "before"}]', commit],
        ).fetchone()
    assert done is not None and done[0] == {
        "first_index": 0,
        "message_count": 1,
        "replayed": False,
    }


async def test_a_schema_of_the_release_before_migrates_forward(
    pg_url: str, legacy: str, fresh: str
) -> None:
    """It keeps its data through migrate() and ends with exactly today's functions."""
    await _migrate_fresh(pg_url, fresh)
    today = _definitions(pg_url, fresh)
    before = _definitions(pg_url, legacy)
    unchanged = [f for f in function_files() if _BEFORE_FUNCTION_FILES.get(f.name) == f.checksum]
    # The files the release's migrations already define are byte for byte theirs.
    for same in unchanged:
        for name in _DEFINED.findall(same.sql):
            assert before[name] == today[name], f"{same.name}: {name} differs"
    _write_like_the_release_before(pg_url, legacy)

    # It opens without migrating unless a function file changed since that release.
    stale = [f.name for f in function_files() if f not in unchanged]
    plain = PostgresStateStore(pg_url, schema=legacy, pool_settings=SMALL_POOL)
    if stale:
        with pytest.raises(MigrationError, match=f"functions/{stale[0]}"):
            await plain.__aenter__()
    else:
        async with plain as store:
            assert await store.get_messages("s") == [ChatMessage(role="user", content="before")]

    async with PostgresStateStore(
        pg_url, schema=legacy, pool_settings=SMALL_POOL, auto_migrate=True
    ) as store:
        assert await store.migrate() == []  # done on open: no numbered migration was pending
    assert _recorded(pg_url, legacy) == {f.name: f.checksum for f in function_files()}
    assert _definitions(pg_url, legacy) == today

    row = ChatMessage(role="user", content="after")
    async with PostgresStateStore(pg_url, schema=legacy, pool_settings=SMALL_POOL) as store:
        assert await store.get_messages("s") == [ChatMessage(role="user", content="before")]
        replay = await store.append_messages("s", MessageCommit(messages=(row,), commit_id="c1"))
        assert (replay.first_index, replay.message_count) == (0, 1)
        landed = await store.append_messages(
            "s",
            MessageCommit(
                messages=(row, row), expect_message_count=1, start_run=StartRun(run_id="r1")
            ),
        )
        assert landed.message_count == 3
        assert await store.pop_messages("s", 1) == [row]
        info = await store.get_session("s")
        assert isinstance(info, SessionInfo) and info.user_id == "u" and info.message_count == 2


async def test_a_changed_function_file_is_stale_until_migrated(pg_url: str, migrated: str) -> None:
    """A recorded checksum that differs from the file stops open; migrate() re-applies it."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("UPDATE {} SET checksum = 'older' WHERE name = 'commit.sql'").format(
                sql.Identifier(migrated, "__agents_functions")
            )
        )
    with pytest.raises(MigrationError) as caught:
        async with PostgresStateStore(pg_url, schema=migrated, pool_settings=SMALL_POOL):
            pass
    assert caught.value.code == "state_migration"
    assert "functions/commit.sql" in str(caught.value)
    async with PostgresStateStore(
        pg_url, schema=migrated, pool_settings=SMALL_POOL, auto_migrate=True
    ) as store:
        await store.create_session("s")
    assert _recorded(pg_url, migrated) == {f.name: f.checksum for f in function_files()}


def test_every_refusal_code_a_function_sends_is_in_cores_table() -> None:
    """The SQL functions refuse with the codes of core's REFUSALS, the same as the Lua scripts."""
    sent: set[str] = set()
    for f in function_files():
        sent |= set(re.findall(r"v_reason := '(\w+)'", f.sql))
        sent |= set(re.findall(r"__agents_refusal\('(\w+)'", f.sql))
        sent |= set(re.findall(r"'refused', '(\w+)'", f.sql))
    assert sent and sent <= set(REFUSALS), sorted(sent - set(REFUSALS))
