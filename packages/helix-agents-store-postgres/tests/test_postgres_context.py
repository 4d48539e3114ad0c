"""The server side of history search: the regex translation, and RE2 taking over."""

from __future__ import annotations

import logging
from collections.abc import Callable

import psycopg
import pytest

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import compile_pattern
from helix_agents.store_postgres import PostgresStateStore
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


async def _session(store: PostgresStateStore, texts: list[str]) -> str:
    sid = (await store.create_session()).id
    rows = tuple(ChatMessage(role="user", content=t) for t in texts)
    await store.append_messages(sid, MessageCommit(messages=rows))
    return sid


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
