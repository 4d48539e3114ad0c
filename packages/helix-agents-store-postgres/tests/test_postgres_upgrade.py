"""A schema migrated by any earlier release opens, and migrates forward to today's functions.

Earlier releases are rebuilt from the repository's history: the text of each
numbered migration (and, from the first release that had them, of each function
file) read with ``git show`` at a pinned commit, applied and recorded the way
that release's ``migrate()`` did. Today's ``migrate()`` must then bring the
schema to exactly the functions a schema migrated from nothing gets.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from psycopg import sql

from helix_agents.core import ChatMessage, MessageCommit, SessionInfo, StartRun
from helix_agents.core.refusals import REFUSALS
from helix_agents.store_postgres import MigrationError, PoolSettings, PostgresStateStore, migrate
from helix_agents.store_postgres._migrations import (
    _BEFORE_FUNCTION_FILES,
    function_files,
    migrations,
)

pytestmark = pytest.mark.anyio

SMALL_POOL = PoolSettings(min_size=1, max_size=2)
_DEFINED = re.compile(r"CREATE (?:OR REPLACE )?FUNCTION (\w+)")
_PACKAGE = "packages/helix-agents-store-postgres/src/helix_agents/store_postgres"
# main before the numbered migrations lost their function bodies: migrations
# 1-6 there are the texts every release applied (none changed after release).
_MAIN_BEFORE = "2dcab65c77947aa738c36f05c1b5a4f0e4d46930"
# The first release with function files (migrations 1-6 and functions/*.sql).
_FIRST_FUNCTION_FILES = "7b33e259fd1096e700ff576f323462fe32bd26c0"

# (commit, how many numbered files, whether that release applied function files)
_RELEASES = [(_MAIN_BEFORE, k, False) for k in range(1, 7)] + [
    (_FIRST_FUNCTION_FILES, 6, True),
    (_MAIN_BEFORE, 7, True),
]


def _git(*args: str) -> str:
    """The output of ``git args`` in this repository; skips (loudly) where history is absent."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        pytest.skip("UPGRADE TEST NOT RUN: no git to read the earlier releases' migrations")
    if done.returncode != 0:
        pytest.skip(
            f"UPGRADE TEST NOT RUN: git {' '.join(args)} failed ({done.stderr.strip()}): "
            f"a clone with the history up to {_MAIN_BEFORE[:12]} is needed (not shallow)"
        )
    return done.stdout


def _files_at(commit: str, folder: str) -> list[tuple[str, str]]:
    """``(name, text)`` of each ``.sql`` file of ``folder`` at ``commit``, by name."""
    paths = _git("ls-tree", "--full-tree", "--name-only", commit, f"{_PACKAGE}/{folder}/").split()
    return [
        (path.rsplit("/", 1)[1], _git("show", f"{commit}:{path}"))
        for path in sorted(paths)
        if path.endswith(".sql")
    ]


def _migrate_like(pg_url: str, schema: str, commit: str, count: int, functions: bool) -> None:
    """What ``migrate()`` of the release at ``commit`` did: its first ``count`` numbered
    files, then (``functions``) its function files, each recorded, in one transaction."""
    steps: list[tuple[str, tuple[object, ...], str]] = [
        ("__agents_migrations", (int(name[:4]), name), text)
        for name, text in _files_at(commit, "migrations")[:count]
    ]
    assert [key[0] for _, key, _ in steps] == list(range(1, count + 1))
    if functions:
        steps += [
            ("__agents_functions", (name,), text) for name, text in _files_at(commit, "functions")
        ]
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute("SELECT set_config('search_path', %s, true)", [f'"{schema}"'])
        conn.execute(
            "CREATE TABLE __agents_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        if functions:
            conn.execute(
                "CREATE TABLE __agents_functions ("
                " name text PRIMARY KEY, checksum text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
        for table, key, text in steps:
            raw = text.encode()
            conn.execute(raw)
            conn.execute(
                sql.SQL("INSERT INTO {} VALUES ({}, %s)").format(
                    sql.Identifier(table), sql.SQL(", ").join([sql.Placeholder()] * len(key))
                ),
                [*key, hashlib.sha256(raw).hexdigest()],
            )


def _definitions(pg_url: str, schema: str) -> dict[str, str]:
    """Each ``__agents_*`` function of ``schema`` as PostgreSQL prints it, and each of its
    indexes, constraints and triggers (keyed ``kind:name``), the schema's name blanked."""
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = %(s)s AND p.proname LIKE '\\_\\_agents\\_%%'"
            " UNION ALL SELECT 'index:' || indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = %(s)s"
            " UNION ALL SELECT 'constraint:' || c.conname, pg_get_constraintdef(c.oid)"
            " FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
            " WHERE n.nspname = %(s)s"
            " UNION ALL SELECT 'trigger:' || t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
            " JOIN pg_class r ON r.oid = t.tgrelid JOIN pg_namespace n ON n.oid = r.relnamespace"
            " WHERE n.nspname = %(s)s AND NOT t.tgisinternal",
            {"s": schema},
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


@pytest.fixture(scope="module")
def today(pg_url: str) -> Iterator[dict[str, str]]:
    """The functions of a schema this package migrated from nothing."""
    name = f"helix_test_{uuid.uuid4().hex[:12]}"

    async def migrate_fresh() -> None:
        async with await psycopg.AsyncConnection.connect(pg_url) as conn:
            await migrate(conn, name)

    try:
        anyio.run(migrate_fresh)
        yield _definitions(pg_url, name)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


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


@pytest.mark.parametrize(
    ("commit", "count", "functions"),
    _RELEASES,
    ids=[f"{c[:7]}-m{k}{'-functions' if f else ''}" for c, k, f in _RELEASES],
)
async def test_a_schema_of_an_earlier_release_migrates_forward(
    pg_url: str, schema: str, today: dict[str, str], commit: str, count: int, functions: bool
) -> None:
    """It keeps its data through migrate() and ends with exactly a fresh schema's functions."""
    _migrate_like(pg_url, schema, commit, count, functions)
    if count >= 2:  # the release had __agents_commit
        _write_like_the_release_before(pg_url, schema)
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        applied = await migrate(conn, schema)
    assert applied == [m.version for m in migrations()][count:]
    assert _recorded(pg_url, schema) == {f.name: f.checksum for f in function_files()}
    assert "trigger:__agents_rows_removed" in today and "__agents_cut_to" in today
    assert _definitions(pg_url, schema) == today

    before = [ChatMessage(role="user", content="before")] if count >= 2 else []
    row = ChatMessage(role="user", content="after")
    async with PostgresStateStore(pg_url, schema=schema, pool_settings=SMALL_POOL) as store:
        if count < 2:
            await store.create_session("s", user_id="u")
        assert await store.get_messages("s") == before
        replay = await store.append_messages(
            "s", MessageCommit(messages=(row,), commit_id="c1", expect_message_count=len(before))
        )
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


async def test_a_schema_of_the_release_before_function_files_opens_while_they_match(
    pg_url: str, schema: str, today: dict[str, str]
) -> None:
    """Without __agents_functions, the files its migrations defined byte for byte are current;
    it opens without migrating unless a function file changed since."""
    _migrate_like(pg_url, schema, _MAIN_BEFORE, 6, False)
    before = _definitions(pg_url, schema)
    unchanged = [f for f in function_files() if _BEFORE_FUNCTION_FILES.get(f.name) == f.checksum]
    for same in unchanged:
        for name in _DEFINED.findall(same.sql):
            assert before[name] == today[name], f"{same.name}: {name} differs"
    stale = [f.name for f in function_files() if f not in unchanged]
    plain = PostgresStateStore(pg_url, schema=schema, pool_settings=SMALL_POOL)
    if stale:
        with pytest.raises(MigrationError, match=f"functions/{stale[0]}"):
            await plain.__aenter__()
    else:
        async with plain as store:
            assert await store.get_session("s") is None
    async with PostgresStateStore(
        pg_url, schema=schema, pool_settings=SMALL_POOL, auto_migrate=True
    ) as store:
        assert await store.migrate() == []  # done on open
    assert _definitions(pg_url, schema) == today


def test_no_function_is_defined_twice() -> None:
    """A function lives in one function file; a numbered migration creates none but the
    empty one its trigger names, so a fresh schema creates each function once at the most."""
    in_files = [n for f in function_files() for n in _DEFINED.findall(f.sql)]
    in_migrations = [n for m in migrations() for n in _DEFINED.findall(m.sql)]
    assert len(in_files) == len(set(in_files))
    assert in_migrations == ["__agents_rows_removed"]
    assert set(in_migrations) <= set(in_files)


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
