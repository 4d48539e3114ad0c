"""The store-wide listing's scan in core: bounded per call, and a walk still finds every match."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.core import listing
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio


class _Counting(MemoryStateStore):
    """Counts the sessions the engine hands to core."""

    read = 0

    def __init__(self) -> None:
        super().__init__()
        inner = self.engine.list_all

        async def counted(after_id: str | None, limit: int) -> Any:
            got = await inner(after_id, limit)
            self.read += len(got)
            return got

        self.engine.list_all = counted  # type: ignore[method-assign]


async def test_a_filtered_call_reads_at_most_the_budget_and_its_cursor_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listing, "SCAN_BUDGET", 30)
    monkeypatch.setattr(listing, "FILTERED_BATCH", 10)
    async with _Counting() as store:
        for n in range(100):
            owner = "rare" if n in (5, 55, 56, 99) else "common"
            await store.create_session(f"s{n:03d}", user_id=owner)
        pages: list[list[str]] = []
        cursor = None
        while True:
            store.read = 0
            page = await store.list_all_sessions(first=2, cursor=cursor, user_id="rare")
            assert store.read <= 30
            pages.append([s.id for s in page.sessions])
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        # Short pages (even empty ones) carry a cursor; the walk finds each match once.
        assert [s for p in pages for s in p] == ["s005", "s055", "s056", "s099"]
        assert [] in pages and all(len(p) <= 2 for p in pages)


async def test_an_unfiltered_page_reads_one_more_than_it_shows() -> None:
    async with _Counting() as store:
        for n in range(10):
            await store.create_session(f"s{n}")
        page = await store.list_all_sessions(first=3)
        assert [s.id for s in page.sessions] == ["s0", "s1", "s2"]
        assert store.read == 4


async def test_a_cursor_is_bound_to_the_filters_not_to_their_spelling() -> None:
    async with MemoryStateStore() as store:
        for sid in ("a", "b", "c"):
            await store.create_session(sid, user_id="u", metadata={"k": 1, "j": [None]})
        first = await store.list_all_sessions(first=1, metadata={"k": 1, "j": [None]})
        assert first.next_cursor is not None
        # The same metadata filter with its keys in another order takes the cursor on.
        again = await store.list_all_sessions(
            first=1, cursor=first.next_cursor, metadata={"j": [None], "k": 1}
        )
        assert [s.id for s in again.sessions] == ["b"]
