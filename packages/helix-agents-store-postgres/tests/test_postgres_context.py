"""The server side of history search: the regex translation, and RE2 taking over."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import Compaction, compile_pattern
from helix_agents.store_postgres import PoolSettings, PostgresStateStore
from helix_agents.store_postgres import _context as context_module
from helix_agents.store_postgres._regex import to_postgres

pytestmark = pytest.mark.anyio

PATTERNS = [
    r"port: \d+",
    r"(?i)ERROR\b",
    r"^step \d{2}$",
    r"\bfoo\b",
    r"a.c",
    r"[^\]a-z]x",
    r"[[:digit:]]+ ok",
    r"\x41B",
    r"(?P<word>\w+)@example\.com",
    r"\Qa.b\E",
    r"colou?r",
    r"x*",
    r"^$",
    r"\s+end$",
    r"(?s)a.b",
]
LINES = [
    "port: 8443",
    "an error here",
    "ERROR: x",
    "step 12",
    "step 123",
    "foo bar",
    "food",
    "abc",
    "a\tc",
    "]x",
    "ax",
    "Ax",
    "12 ok",
    "AB",
    "me@example.com",
    "a.b",
    "axb",
    "color",
    "colour",
    "",
    "  end",
    "Straße",
]


def test_translation_matches_everything_re2_matches(pg_url: str) -> None:
    """The server's match is a prefilter: it may match more than RE2, never less."""
    with psycopg.connect(pg_url) as conn:
        for pattern in PATTERNS:
            server = to_postgres(pattern)
            assert server is not None, pattern
            regex = compile_pattern(pattern)
            for line in LINES:
                (matched,) = conn.execute("SELECT %s ~ %s", (line, server)).fetchone()  # type: ignore[misc]
                if regex.search(line):
                    assert matched, (pattern, server, line)


def test_patterns_without_a_safe_translation() -> None:
    for pattern in (r"a(?i)b", r"\pL+", r"(?i)straße", r"(?i:ab)c", r"\C"):
        assert to_postgres(pattern) is None, pattern


async def _append(store: PostgresStateStore, sid: str, texts: list[str]) -> None:
    rows = tuple(ChatMessage(role="user", content=t) for t in texts)
    await store.append_messages(sid, MessageCommit(messages=rows))


async def _session(store: PostgresStateStore, texts: list[str]) -> str:
    sid = (await store.create_session()).id
    await _append(store, sid, texts)
    return sid


async def _finds_the_archived_needle(store: PostgresStateStore) -> None:
    """With ``max_messages=3``, a compaction archives row 0; the search still finds it."""
    sid = await _session(store, ["the needle: 42", "b", "c"])
    await store.record_compaction(sid, Compaction(boundary=1, summary="s"))
    await _append(store, sid, ["d", "e", "f"])
    found = await store.search_history(sid, grep=r"needle: \d+")
    assert [(h.index, h.archived) for h in found.hits] == [(0, True)]


async def test_untranslatable_patterns_are_searched_with_re2(
    store_on: Callable[..., PostgresStateStore], pg_url: str
) -> None:
    async with store_on(pg_url) as store:
        sid = await _session(store, ["STRASSE", "Straße", "straße 9", "plain"])
        found = await store.search_history(sid, grep=r"(?i)straße")
        assert [h.index for h in found.hits] == [2, 1]
        found = await store.search_history(sid, grep=r"\p{Lu}TRASSE")
        assert [h.index for h in found.hits] == [0]


async def test_a_server_search_that_runs_long_is_finished_by_re2(
    store_on: Callable[..., PostgresStateStore],
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with store_on(pg_url) as store:
        texts = [f"row {i} of many, nothing to see" for i in range(20_000)]
        texts[17] = "the needle: 42"
        texts[19_000] = "another needle: 7"
        sid = await _session(store, texts)
        monkeypatch.setattr(context_module, "SEARCH_TIMEOUT_MS", 1)
        with caplog.at_level(logging.INFO, logger="helix_agents.store_postgres"):
            found = await store.search_history(sid, grep=r"needle: \d+")
        assert [(h.index, h.line) for h in found.hits] == [
            (19_000, "another needle: 7"),
            (17, "the needle: 42"),
        ]
        assert "using RE2" in caplog.text


@pytest.fixture
def trgm_url(pg_url: str) -> Iterator[str]:
    """A scratch database with ``pg_trgm`` installed, dropped afterwards."""
    name = f"helix_trgm_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        pytest.skip(f"cannot create a scratch database for pg_trgm here: {exc}")
    url = make_conninfo(pg_url, dbname=name)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION pg_trgm")
            except psycopg.Error as exc:
                pytest.skip(f"pg_trgm cannot be installed here: {exc}")
        yield url
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


async def test_with_pg_trgm_the_archive_gets_a_trigram_index(trgm_url: str) -> None:
    settings = PoolSettings(min_size=1, max_size=2)
    async with PostgresStateStore(
        trgm_url, auto_migrate=True, max_messages=3, pool_settings=settings
    ) as store:
        await _finds_the_archived_needle(store)
    with psycopg.connect(trgm_url) as conn:
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes")}
        assert "__agents_archive_trgm" in indexes
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(
            row[0]
            for row in conn.execute(
                "EXPLAIN SELECT idx FROM public.__agents_archive"
                " WHERE public.__agents_row_text(body) ~ '(?n)needle: \\d+'"
            )
        )
        assert "__agents_archive_trgm" in plan


async def test_without_pg_trgm_there_is_no_index_and_search_works(
    store_on: Callable[..., PostgresStateStore], pg_url: str, migrated: str
) -> None:
    async with store_on(pg_url, max_messages=3) as store:
        await _finds_the_archived_needle(store)
    with psycopg.connect(pg_url) as conn:
        (installed,) = conn.execute(  # type: ignore[misc]
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'"
        ).fetchone()
        (indexed,) = conn.execute(  # type: ignore[misc]
            "SELECT count(*) FROM pg_indexes WHERE schemaname = %s"
            " AND indexname = '__agents_archive_trgm'",
            (migrated,),
        ).fetchone()
    # The index comes with the extension, and only with it.
    assert indexed == installed
