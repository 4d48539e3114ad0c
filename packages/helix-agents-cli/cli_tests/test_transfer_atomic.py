"""EXP-11: each session of an import is one atomic write on every backend: a reader never
finds it partly written, and a write the target refuses half-way leaves none of it
(docs/export.md)."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
import redis
from psycopg import sql

from helix_agents.contract.rules_context import ctx
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    SessionStateStore,
    StateStoreError,
    open_store,
)
from helix_agents.core.transfer import export_lines, import_lines
from helix_agents.core.transfer._records import session_records
from helix_agents.core.transfer._restore import engine_of
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

FIXTURES = {"sqlite": "sqlite_url", "postgres": "pg_url", "redis": "redis_url"}
ROWS = 2000  # four plans of rows, then commits and an output: a session of many writes


async def _source_lines() -> tuple[list[str], list[Any]]:
    """The export of a small session and a big one, and the big one's records."""
    async with open_store(f"memory://atomic-{uuid.uuid4().hex}") as store:
        await store.create_session("small", user_id="u")
        await store.create_session("big", user_id="u")
        for part in range(ROWS // 500):
            rows = tuple(
                ChatMessage(role="user", content=f"row {part * 500 + n} " + "x" * 200)
                for n in range(500)
            )
            await store.append_messages(
                "big", MessageCommit(messages=rows, commit_id=f"commit-{part}")
            )
        await ctx(store).store_output("big", "line\n" * 1000, tool_name="t", key="out-1")
        lines = [line async for line in export_lines(store, ["small", "big"], whole_store=True)]
        dump = await (await engine_of(store)).dump("big")
        assert dump is not None
        return lines, list(session_records(dump))


def _url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "memory":
        return f"memory://atomic-{uuid.uuid4().hex}"
    url: str = request.getfixturevalue(FIXTURES[backend])
    return url


def _options(url: str) -> dict[str, Any]:
    return {"auto_migrate": True} if url.startswith("postgres") else {}


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres", "redis"])
async def test_EXP_11_a_reader_never_finds_a_session_partly_imported(
    backend: str, request: pytest.FixtureRequest
) -> None:
    lines, whole = await _source_lines()
    url = _url(backend, request)
    async with open_store(url, **_options(url)) as target:
        engine = await engine_of(target)
        seen: list[bool] = []
        done = asyncio.Event()

        async def poll() -> None:
            while not done.is_set():
                found = await engine.dump("big")
                seen.append(found is not None)
                assert found is None or list(session_records(found)) == whole
                await asyncio.sleep(0)

        async def run() -> None:
            try:
                await import_lines(target, lambda: iter(lines), "f")
            finally:
                done.set()

        await asyncio.gather(poll(), run())
        assert seen  # the reader read while the import ran
        final = await engine.dump("big")
        assert final is not None and list(session_records(final)) == whole


async def _refuse_outputs(backend: str, url: str) -> None:
    """Make the target itself refuse the big session's output, written after its rows."""
    if backend == "sqlite":
        with sqlite3.connect(urlsplit(url).path) as db:
            db.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON __agents_outputs "
                "WHEN NEW.session_id = 'big' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        return
    schema = sql.Identifier(parse_qs(urlsplit(url).query)["schema"][0])
    server = url.split("?")[0]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE FUNCTION {s}.refuse() RETURNS trigger LANGUAGE plpgsql "
                "AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$"
            ).format(s=schema)
        )
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER refuse BEFORE INSERT ON {s}.__agents_outputs FOR EACH ROW "
                "WHEN (NEW.session_id = 'big') EXECUTE FUNCTION {s}.refuse()"
            ).format(s=schema)
        )


async def _allow_outputs(backend: str, url: str) -> None:
    if backend == "sqlite":
        with sqlite3.connect(urlsplit(url).path) as db:
            db.execute("DROP TRIGGER refuse")
        return
    schema = sql.Identifier(parse_qs(urlsplit(url).query)["schema"][0])
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TRIGGER refuse ON {s}.__agents_outputs").format(s=schema))


async def _ids(store: SessionStateStore) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=10)).sessions]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_EXP_11_a_write_refused_half_way_leaves_none_of_the_session(
    backend: str, request: pytest.FixtureRequest
) -> None:
    lines, whole = await _source_lines()
    url = _url(backend, request)
    async with open_store(url, **_options(url)) as target:
        await _refuse_outputs(backend, url)
        with pytest.raises(StateStoreError):
            await import_lines(target, lambda: iter(lines), "f")
        assert await _ids(target) == ["small"]  # written before; nothing of "big"
        assert await target.get_session("big") is None
        assert await (await engine_of(target)).dump("big") is None
        await _allow_outputs(backend, url)
        again = await import_lines(target, lambda: iter(lines), "f")
        assert (again.present, again.written) == (["small"], ["big"])
        final = await (await engine_of(target)).dump("big")
        assert final is not None and list(session_records(final)) == whole


async def test_EXP_11_redis_writes_a_session_only_over_absent_keys(
    request: pytest.FixtureRequest,
) -> None:
    """A Redis script's writes are not rolled back: the restore refuses before its first
    write when a key of the session is there (of any type), so it cannot fail after."""
    lines, whole = await _source_lines()
    url = _url("redis", request)
    async with open_store(url) as target:
        assert isinstance(target, RedisStateStore)
        outputs = next(k for k in target.engine.keys.session("big") if k.endswith(":out"))
        with redis.Redis.from_url(url.split("?")[0]) as client:
            client.set(outputs, "not a hash")  # an HSET on it would fail mid-script
            with pytest.raises(StateStoreError) as refused:
                await import_lines(target, lambda: iter(lines), "f")
            assert refused.value.session_id == "big"
            assert await _ids(target) == ["small"]
            assert await target.get_session("big") is None
            client.delete(outputs)
        again = await import_lines(target, lambda: iter(lines), "f")
        assert (again.present, again.written) == (["small"], ["big"])
        final = await (await engine_of(target)).dump("big")
        assert final is not None and list(session_records(final)) == whole
