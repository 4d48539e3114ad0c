"""The plain append's one-statement path: what it writes, and every refusal it can meet.

A plain append (rows, maybe a fence and an expected count) checks and updates
the session row with one ``UPDATE``, and reads it back only when it needs the
count, the run or the first index. Each refusal must be the one
the full path gave — same error type and code, in core's order — and leave
the store exactly as it was. The statement trace (white-box) shows which path ran.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    MessageCommit,
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    StartRun,
    StateStoreError,
    ValidationError,
)
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio

# The session row checked and updated by one UPDATE, then the two rows.
ONE_STATEMENT = ["BEGIN", "UPDATE", "INSERT", "INSERT", "COMMIT"]
# ... and read back for the count, the run or the first index.
READ_BACK = ["BEGIN", "UPDATE", "SELECT", "INSERT", "INSERT", "COMMIT"]
_ROWS = (ChatMessage(role="user", content="u"), ContextMessage(kind="instruction", content="c"))


class StepClock:
    """A clock that moves one second per reading, so every write has its own time."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStateStore]:
    async with SQLiteStateStore(tmp_path / "plain.db", clock=StepClock()) as opened:
        await opened.create_session("s", user_id="u")
        await opened.append_messages("s", MessageCommit(messages=_ROWS))
        yield opened


async def traced(store: SQLiteStateStore) -> list[str]:
    statements: list[str] = []
    assert store._writer is not None
    await store._writer._conn.set_trace_callback(statements.append)
    return statements


def stored(store: SQLiteStateStore) -> list[Any]:
    """Every table's rows for the session, read from the file."""
    with closing(sqlite3.connect(store.path)) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '__agents%' "
                "AND name NOT IN ('__agents_migrations') ORDER BY name"
            )
        ]
        return [
            (t, sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)) for t in tables
        ]


async def refused(
    store: SQLiteStateStore, commit: MessageCommit | dict[str, Any], sid: str = "s"
) -> tuple[StateStoreError, list[str]]:
    before = stored(store)
    statements = await traced(store)
    with pytest.raises(StateStoreError) as caught:
        await store.append_messages(sid, commit)  # type: ignore[arg-type]
    assert stored(store) == before
    return caught.value, [sql.split()[0].upper() for sql in statements]


async def test_plain_append_counts_and_moves_activity_forward(store: SQLiteStateStore) -> None:
    before = await store.get_session("s")
    assert before is not None
    statements = await traced(store)
    result = await store.append_messages("s", MessageCommit(messages=_ROWS, expect_message_count=2))
    assert (result.first_index, result.message_count, result.replayed) == (2, 4, False)
    assert [sql.split()[0] for sql in statements] == ONE_STATEMENT
    after = await store.get_session("s")
    assert after is not None
    assert after.message_count == 4
    assert after.last_activity_at > before.last_activity_at
    assert [m.role for m in await store.get_messages("s")] == ["user", "context"] * 2
    # ui_count counts only the non-context rows: one per commit.
    tables = dict(stored(store))
    assert [row[7] for row in tables["__agents_sessions"]] == [2]


async def test_activity_moves_forward_under_a_clock_that_goes_back(tmp_path: Path) -> None:
    fixed = datetime(2026, 1, 1, tzinfo=UTC)
    async with SQLiteStateStore(tmp_path / "back.db", clock=lambda: fixed) as opened:
        await opened.create_session("s")
        seen = []
        for _ in range(3):
            await opened.append_messages("s", MessageCommit(messages=_ROWS[:1]))
            info = await opened.get_session("s")
            assert info is not None
            seen.append(info.last_activity_at)
        assert seen == [fixed + timedelta(microseconds=i) for i in (1, 2, 3)]


async def test_count_conflict_is_refused_unchanged(store: SQLiteStateStore) -> None:
    error, verbs = await refused(store, MessageCommit(messages=_ROWS, expect_message_count=1))
    assert isinstance(error, MessageCountConflictError)
    assert error.code == "state_concurrency_conflict"
    assert (error.expected, error.actual) == (1, 2)
    assert verbs[:2] == ["BEGIN", "UPDATE"] and verbs[-1] == "ROLLBACK"


async def test_missing_session_is_refused(store: SQLiteStateStore) -> None:
    error, _ = await refused(store, MessageCommit(messages=_ROWS), sid="nope")
    assert isinstance(error, SessionNotFoundError)
    assert error.code == "state_session_not_found"
    # A missing session is named before an invalid commit, as before.
    error, _ = await refused(store, {"messages": [{"role": "nobody"}]}, sid="nope")
    assert isinstance(error, SessionNotFoundError)
    error, _ = await refused(store, {"messages": [{"role": "nobody"}]})
    assert isinstance(error, ValidationError)


@pytest.mark.parametrize("expect", [None, 2, 1])
async def test_fence_without_a_run_is_refused_unchanged(
    store: SQLiteStateStore, expect: int | None
) -> None:
    commit = MessageCommit(messages=_ROWS, fence_run_id="r1", expect_message_count=expect)
    error, verbs = await refused(store, commit)
    # The fence is checked before the count, so a wrong count changes nothing here.
    assert type(error) is RunSupersededError
    assert error.code == "state_run_superseded"
    assert verbs[-1] == "ROLLBACK"


@pytest.mark.parametrize("expect", [None, 2, 1])
@pytest.mark.parametrize("finished", [False, True])
async def test_fence_on_an_old_or_finished_run_is_refused_unchanged(
    store: SQLiteStateStore, expect: int | None, finished: bool
) -> None:
    await store.append_messages("s", MessageCommit(messages=(), start_run=StartRun(run_id="r1")))
    await store.finish_run("s", "r1", "completed")
    await store.append_messages("s", MessageCommit(messages=(), start_run=StartRun(run_id="r2")))
    if finished:
        await store.finish_run("s", "r2", "failed")
    fence = "r2" if finished else "r1"
    commit = MessageCommit(messages=_ROWS, fence_run_id=fence, expect_message_count=expect)
    error, verbs = await refused(store, commit)
    assert type(error) is RunSupersededError
    assert verbs[-1] == "ROLLBACK"


async def test_fenced_append_on_the_live_run_lands(store: SQLiteStateStore) -> None:
    await store.append_messages("s", MessageCommit(messages=(), start_run=StartRun(run_id="r1")))
    statements = await traced(store)
    commit = MessageCommit(messages=_ROWS, fence_run_id="r1", expect_message_count=2)
    result = await store.append_messages("s", commit)
    assert (result.first_index, result.message_count) == (2, 4)
    assert [sql.split()[0] for sql in statements] == READ_BACK
    info = await store.get_session("s")
    assert info is not None and info.current_run is not None
    assert (info.current_run.run_id, info.current_run.status) == ("r1", "live")


async def test_invalid_fence_id_is_refused_unchanged(store: SQLiteStateStore) -> None:
    await store.append_messages("s", MessageCommit(messages=(), start_run=StartRun(run_id="r1")))
    commit = MessageCommit.model_construct(messages=_ROWS, fence_run_id="", expect_message_count=2)
    error, _ = await refused(store, commit)
    assert isinstance(error, ValidationError)


@pytest.mark.parametrize("expect", [False, True])
async def test_retention_on_the_plain_path(tmp_path: Path, expect: bool) -> None:
    async with SQLiteStateStore(tmp_path / "keep.db", max_messages=3) as opened:
        await opened.create_session("s")
        for i in range(4):
            rows = (
                ChatMessage(role="user", content=f"{i}a"),
                ChatMessage(role="user", content=f"{i}b"),
            )
            count = 2 * i if expect else None
            commit = MessageCommit(messages=rows, expect_message_count=count)
            result = await opened.append_messages("s", commit)
            assert result.message_count == 2 * (i + 1)
        assert [m.content for m in await opened.get_messages("s")] == ["2b", "3a", "3b"]
        info = await opened.get_session("s")
        assert info is not None and info.message_count == 8
        with closing(sqlite3.connect(opened.path)) as conn:
            first, ui = conn.execute(
                "SELECT first_index, ui_count FROM __agents_sessions WHERE session_id = 's'"
            ).fetchone()
        assert (first, ui) == (5, 8)


async def test_without_an_expected_count_the_row_is_read_back(store: SQLiteStateStore) -> None:
    statements = await traced(store)
    result = await store.append_messages("s", MessageCommit(messages=_ROWS))
    assert (result.first_index, result.message_count) == (2, 4)
    assert [sql.split()[0] for sql in statements] == READ_BACK
    assert [m.role for m in await store.get_messages("s")] == ["user", "context"] * 2
