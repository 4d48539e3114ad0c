"""The plain append's one-statement path in ``__agents_commit`` (docs/performance.md).

A plain append without retention is one UPDATE of the session row (which locks
it and checks the expected count) with the INSERT of the rows in the same
statement; anything else, or an UPDATE that matched no row, takes the checks
in order. These tests hold that path to the same results as the checks, and
count the statements it runs with ``auto_explain``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    Message,
    MessageCommit,
    MessageCountConflictError,
    SessionNotFoundError,
)
from helix_agents.core.messages import dump_message
from helix_agents.store_postgres import PostgresStateStore
from helix_agents.store_postgres._sql import Statements

pytestmark = pytest.mark.anyio

StoreFactory = Callable[..., PostgresStateStore]

_PLAIN: dict[str, Any] = dict.fromkeys(("run", "rewind", "fence", "expect", "id")) | {
    "ci": [],
    "la": [],
}


def _rows(n: int) -> tuple[Message, ...]:
    return tuple(ChatMessage(role="user", content=f"m{i}") for i in range(n))


async def test_plain_appends_racing_on_one_count_land_once(open_store: StoreFactory) -> None:
    """Eight appends expecting the same count: one lands, seven are count conflicts."""
    async with open_store() as store:
        await store.create_session("s")
        commit = MessageCommit(messages=_rows(3), expect_message_count=0)
        results = await asyncio.gather(
            *(store.append_messages("s", commit) for _ in range(8)), return_exceptions=True
        )
        landed = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, MessageCountConflictError)]
        assert (len(landed), len(refused)) == (1, 7)
        assert (landed[0].first_index, landed[0].message_count) == (0, 3)
        assert await store.get_message_count("s") == 3
        assert [m.content for m in await store.get_messages("s")] == ["m0", "m1", "m2"]


async def test_plain_append_counts_context_rows_apart(open_store: StoreFactory) -> None:
    """The ui count of the one-statement path leaves context rows out, as the checks' path does."""
    async with open_store() as store:
        await store.create_session("s")
        rows = (
            ChatMessage(role="user", content="a"),
            ContextMessage(kind="notice", content="ctx"),
            ChatMessage(role="assistant", content="b"),
        )
        result = await store.append_messages("s", MessageCommit(messages=rows))
        assert (result.first_index, result.message_count) == (0, 3)
        assert await store.get_ui_message_count("s") == 2
        await store.append_messages("s", MessageCommit(messages=rows, expect_message_count=3))
        assert (await store.get_message_count("s"), await store.get_ui_message_count("s")) == (6, 4)


async def test_plain_append_refusals_report_the_state(open_store: StoreFactory) -> None:
    """A miss of the one-statement path goes through the checks: no session, then the count."""
    async with open_store() as store:
        with pytest.raises(SessionNotFoundError):
            await store.append_messages("nope", MessageCommit(messages=_rows(1)))
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=_rows(2)))
        with pytest.raises(MessageCountConflictError) as caught:
            await store.append_messages(
                "s", MessageCommit(messages=_rows(1), expect_message_count=5)
            )
        assert caught.value.actual == 2
        assert await store.get_message_count("s") == 2


async def _nested_statements(conn: psycopg.AsyncConnection[Any], query: bytes, *args: Any) -> int:
    """How many statements the call runs inside its functions (auto_explain's nested plans)."""
    try:
        await conn.execute("LOAD 'auto_explain'")
    except psycopg.Error as exc:
        pytest.skip(f"auto_explain cannot be loaded here: {exc}")
    for setting in (
        "auto_explain.log_min_duration = 0",
        "auto_explain.log_nested_statements = on",
        "client_min_messages = log",
    ):
        await conn.execute(f"SET {setting}")
    plans: list[str] = []
    conn.add_notice_handler(lambda d: plans.append(d.message_primary or ""))
    await conn.execute(query, args)
    await conn.execute("RESET client_min_messages")
    top = [p for p in plans if "__agents_commit_scoped(" in p and "Query Text: SELECT" in p]
    assert len(top) == 1, plans
    return sum(1 for p in plans if p.startswith("duration:")) - 1


async def test_plain_append_is_one_statement(pg_url: str, migrated: str) -> None:
    """A plain append runs one statement inside the commit; with retention, the checks' path runs
    six (the lock, the rows, the DELETE and its trigger's two statements, the session row)."""
    query = Statements.for_schema(migrated).commit
    rows = json.dumps([dump_message(m) for m in _rows(3)])
    now = datetime.now(UTC)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        sql = f'INSERT INTO "{migrated}".__agents_sessions (session_id, created_at,'
        sql += " last_activity_at, metadata) VALUES ('s', now(), now(), '{}')"
        await conn.execute(sql)
        plain = json.dumps({**_PLAIN, "expect": 0})
        assert await _nested_statements(conn, query, "s", rows, plain, now, None, "[]") == 1
        kept = await _nested_statements(conn, query, "s", rows, json.dumps(_PLAIN), now, 4, "[]")
        assert kept == 6
        cur = await conn.execute(
            f'SELECT message_count, first_index, ui_count FROM "{migrated}".__agents_sessions'
        )
        assert await cur.fetchone() == (6, 2, 6)
