"""One-statement reads run first on the event loop's thread, and fall back to the reader's.

White-box: the tests count the reads that reach the reader's thread, and make
the event loop thread's connection (the engine's ``_inline``) run out of time or fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from helix_agents.core import ChatMessage, MessageCommit, SessionNotFoundError
from helix_agents.store_sqlite import SQLiteEngine, SQLiteStateStore, _inline

pytestmark = pytest.mark.anyio

ROWS = 3000


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStateStore]:
    async with SQLiteStateStore(tmp_path / "inline.db") as opened:
        await opened.create_session("s", user_id="u")
        rows = tuple(ChatMessage(role="user", content=f"row {i} " + "x" * 200) for i in range(ROWS))
        await opened.append_messages("s", MessageCommit(messages=rows))
        yield opened


def engine_of(store: SQLiteStateStore) -> SQLiteEngine:
    assert isinstance(store.engine, SQLiteEngine)
    return store.engine


def count_hops(store: SQLiteStateStore) -> list[int]:
    """Count the reads that reach the reader's thread (``hops[0]``)."""
    reader = engine_of(store)._reader
    assert reader is not None
    hops = [0]
    read = reader.run

    async def counted(*args: Any, **kwargs: Any) -> Any:
        hops[0] += 1
        return await read(*args, **kwargs)

    reader.run = counted  # type: ignore[method-assign]
    return hops


async def test_short_reads_stay_on_the_event_loop_thread(store: SQLiteStateStore) -> None:
    hops = count_hops(store)
    tail = await store.get_messages("s", limit=20)
    assert [m.content for m in tail] == [f"row {i} " + "x" * 200 for i in range(ROWS - 20, ROWS)]
    assert await store.get_message_count("s") == ROWS
    assert (await store.list_sessions("u")).sessions[0].id == "s"
    with pytest.raises(SessionNotFoundError):
        await store.get_messages("missing", limit=20)
    assert hops == [0]


async def test_a_read_past_its_budget_runs_on_the_readers_thread(
    store: SQLiteStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite is interrupted on the event loop's thread; the reader's thread reads it all."""
    hops = count_hops(store)
    monkeypatch.setattr(_inline, "BUDGET", 0.0)
    everything = await store.get_messages("s")
    assert len(everything) == ROWS
    assert everything[0].content == "row 0 " + "x" * 200
    assert everything[-1].content == f"row {ROWS - 1} " + "x" * 200
    assert hops == [1]


async def test_a_failing_inline_connection_leaves_reads_to_the_readers_thread(
    store: SQLiteStateStore,
) -> None:
    hops = count_hops(store)
    inline = engine_of(store)._inline
    assert inline is not None
    inline._conn.close()  # every statement on it now fails
    assert len(await store.get_messages("s", limit=5)) == 5
    assert await store.get_message_count("s") == ROWS
    assert hops == [2]


async def test_reads_from_another_thread_use_the_readers_thread(store: SQLiteStateStore) -> None:
    """The inline connection belongs to the thread that opened the store."""
    hops = count_hops(store)

    def in_another_loop(read: Callable[[], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            return await read()

        return asyncio.run(main())

    tail = await asyncio.to_thread(in_another_loop, lambda: store.get_messages("s", limit=3))
    assert [m.content for m in tail][-1] == f"row {ROWS - 1} " + "x" * 200
    assert hops == [1]
