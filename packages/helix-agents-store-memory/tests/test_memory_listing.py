"""The memory engine's store-wide listing: the id index is exact, and ``list_all`` answers
the seam's promise (``limit`` sessions, fewer only at the end) also when a session vanishes
between reading its id and reading it (another thread's delete)."""

from __future__ import annotations

import pytest

from helix_agents.core.clock import utcnow
from helix_agents.store_memory import MemoryData, MemoryStateStore
from helix_agents.store_memory._engine import MemoryEngine
from helix_agents.store_memory._listing import Listing

pytestmark = pytest.mark.anyio


async def test_list_all_returns_limit_sessions_and_reads_on_past_vanished_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = MemoryData()
    async with MemoryStateStore(data) as store:
        for n in range(5):
            await store.create_session(f"s{n}")
        engine = MemoryEngine(data)
        assert [s.id for s in await engine.list_all(None, 2)] == ["s0", "s1"]
        assert [s.id for s in await engine.list_all("s3", 5)] == ["s4"]
        # s1 vanishes between the index read and the session read.
        live = engine._live
        monkeypatch.setattr(engine, "_live", lambda sid: None if sid == "s1" else live(sid))
        assert [s.id for s in await engine.list_all(None, 3)] == ["s0", "s2", "s3"]


async def test_the_id_index_drops_deleted_sessions() -> None:
    data = MemoryData()
    async with MemoryStateStore(data) as store:
        for sid in ("b", "a", "c"):
            await store.create_session(sid)
        await store.delete_session("b")
        assert data.listing.page_ids(None, 10) == ["a", "c"]
        await store.create_session("b")
        assert data.listing.page_ids("a", 10) == ["b", "c"]


def test_removing_an_id_not_indexed_changes_nothing() -> None:
    listing = Listing()
    listing.add(None, utcnow(), "m")
    for absent in ("z", "a"):
        listing.remove(None, utcnow(), absent)
    assert listing.page_ids(None, 10) == ["m"]
