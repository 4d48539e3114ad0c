"""HelixMemoryStore's own rules (LGM-1..LGM-9) on each backend: versions, last write wins,
plain-text query, TTL, hostile input, sync calls, sharing."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime

import pytest
from helix_fixtures import other_store, store, stores
from langgraph.store.base import GetOp, InvalidNamespaceError, Op, PutOp, SearchOp

from helix_agents.core import Checkpoint as Record
from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.adapters import mark
from helix_agents.core.errors import ForeignSessionError
from helix_agents.langgraph import (
    CorruptRecordError,
    EventLoopError,
    HelixMemoryStore,
    UnstorableValueError,
)
from helix_agents.langgraph.memory_errors import MemoryKeyError, SemanticSearchUnsupportedError
from helix_agents.langgraph.memory_store import MEMORY_SESSION

__all__ = ["other_store", "store", "stores"]

pytestmark = pytest.mark.anyio
ITEMS = "m\x1f"


async def _records(store: SessionStateStore, prefix: str = ITEMS) -> list[str]:
    """The memory session's record ids, read around the memory store."""
    if await store.get_session(MEMORY_SESSION) is None:
        return []
    page = await store.page_checkpoints(MEMORY_SESSION, prefix=prefix, limit=500)
    return [record.checkpoint_id for record in page]


async def test_versions_created_at_and_last_write_wins(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    one, two = HelixMemoryStore(store), HelixMemoryStore(other_store)
    await one.aput(("u",), "k", {"v": 0})
    first = await one.aget(("u",), "k")
    for i in range(1, 5):  # alternating instances, one after another: the later put wins
        await (one if i % 2 else two).aput(("u",), "k", {"v": i})
        for reader in (one, two):
            got = await reader.aget(("u",), "k")
            assert got is not None and got.value == {"v": i}
    last = await two.aget(("u",), "k")
    assert first is not None and last is not None
    assert last.created_at == first.created_at and last.updated_at > first.updated_at  # LGM-1
    assert len(await _records(store)) == 1  # the versions below the item are gone

    await asyncio.gather(
        *(w.aput(("u",), "k", {"v": f"{n}-{w is one}"}) for n in range(4) for w in (one, two))
    )
    seen = {repr(await r.aget(("u",), "k")) for r in (one, two)}
    assert len(seen) == 1  # both instances read one winner, whole
    winner = await one.aget(("u",), "k")
    assert winner is not None and winner.value["v"] in {
        f"{n}-{b}" for n in range(4) for b in (True, False)
    }
    # a racing put can land below the winner after its cleanup: the next put removes it
    await two.aput(("u",), "k", {"v": "settled"})
    assert len(await _records(store)) == 1

    await asyncio.gather(one.adelete(("u",), "k"), two.aput(("u",), "k", {"v": "late"}))
    after = [await r.aget(("u",), "k") for r in (one, two)]
    assert after[0] == after[1] and (after[0] is None or after[0].value == {"v": "late"})


async def test_query_matches_every_word_of_the_text(store: SessionStateStore) -> None:
    memory = HelixMemoryStore(store)
    await memory.aput(("q",), "a", {"note": "Ada likes GREEN tea", "n": 42})
    await memory.aput(("q",), "b", {"note": "Bob likes coffee", "tags": ["green"]})
    await memory.aput(("q",), "c", {"drink": "water"})

    async def keys(query: str) -> set[str]:
        return {it.key for it in await memory.asearch(("q",), query=query, limit=10)}

    assert await keys("green") == {"a", "b"}
    assert await keys("green TEA") == {"a"}
    assert await keys("42") == {"a"}
    assert await keys("drink") == {"c"}  # keys are text too
    assert await keys("green water") == set()
    found = await memory.asearch(("q",), query="coffee")
    assert [it.score for it in found] == [None]


async def test_ttl_expiry_refresh_and_sweep(store: SessionStateStore) -> None:
    memory = HelixMemoryStore(store, ttl={"refresh_on_read": True})
    ttl = 0.4 / 60  # 0.4 s, in minutes
    await memory.aput(("t",), "kept", {"v": 1}, ttl=ttl)
    await memory.aput(("t",), "dies", {"v": 2}, ttl=ttl)
    await memory.aput(("t", "sub"), "dies", {"v": 3}, ttl=ttl)
    await memory.aput(("t",), "forever", {"v": 4})
    first = await memory.aget(("t",), "kept", refresh_ttl=False)
    for _ in range(3):  # every 0.25 s a read moves "kept"'s expiry on; the others lapse
        await asyncio.sleep(0.25)
        assert await memory.aget(("t",), "kept") is not None
    refreshed = await memory.aget(("t",), "kept")
    assert refreshed is not None and first is not None and refreshed.updated_at == first.updated_at
    assert await memory.aget(("t",), "dies") is None  # absent before any sweep
    assert {it.key for it in await memory.asearch(("t",), limit=10)} == {"kept", "forever"}
    assert await memory.alist_namespaces() == [("t",)]
    assert await memory.asweep_ttl() == 2
    assert sorted(r.split("\x1e")[1].split("\x1f")[0] for r in await _records(store)) == [
        "forever",
        "kept",
    ]
    with_default = HelixMemoryStore(store, ttl={"default_ttl": ttl})
    await with_default.aput(("d",), "k", {"v": 1})  # the default TTL applies
    await asyncio.sleep(0.5)
    assert await memory.aget(("t",), "kept", refresh_ttl=False) is None
    assert await with_default.aget(("d",), "k") is None
    assert len(await _records(store)) == 3  # expired, hidden, not gone
    task = await with_default.start_ttl_sweeper(0.1 / 60)  # every 0.1 s
    await asyncio.sleep(0.3)
    assert [r.split("\x1e")[1].split("\x1f")[0] for r in await _records(store)] == ["forever"]
    await with_default.stop_ttl_sweeper()
    assert task.cancelled()
    assert await memory.asweep_ttl() == 0
    with pytest.raises(ValidationError):
        await memory.start_ttl_sweeper()  # no interval given or configured


async def test_hostile_values_and_labels(store: SessionStateStore) -> None:
    memory = HelixMemoryStore(store)
    huge = {"text": "x" * 2_000_000, "list": list(range(10_000))}
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(98):  # 99 levels: within core's 100
        deep = {"d": deep}
    odd = [
        ("  spaced  ",),
        ("ünï", "çödé", "🙂"),
        ("\u202eltr",),
        ("*",),
        ("\x01ctl", "x"),
        ("a", "a"),
    ]
    await memory.aput(("big",), "huge", huge)
    await memory.aput(("big",), "deep", deep)
    for ns in odd:
        await memory.aput(ns, "key with spaces/and:colons", {"ns": list(ns)})
    got = await memory.aget(("big",), "huge")
    assert got is not None and got.value == huge
    got = await memory.aget(("big",), "deep")
    assert got is not None and got.value == deep
    for ns in odd:
        got = await memory.aget(ns, "key with spaces/and:colons")
        assert got is not None and got.value == {"ns": list(ns)} and got.namespace == ns
    assert sorted(await memory.alist_namespaces(limit=50)) == sorted([("big",), *odd])
    before = await _records(store)

    too_deep: dict[str, object] = {"d": {"d": deep}}
    refused_values = [
        too_deep,
        {"x": math.nan},
        {"x": math.inf},
        {"x": "\ud800"},
        {"x": (1, 2)},
        {"x": datetime.now(UTC)},
        {"x": 10**700},
        {1: "int key"},
    ]
    for value in refused_values:
        with pytest.raises(UnstorableValueError) as info:
            await memory.abatch([PutOp(("ok",), "first", {"v": 1}), PutOp(("ok",), "bad", value)])  # type: ignore[arg-type]
        assert info.value.code == "validation_error" and info.value.session_id == MEMORY_SESSION
        assert info.value.field == "bad"
    refused_keys: list[Op] = [
        PutOp(("a\x1fb",), "k", {"v": 1}),
        PutOp(("a\x1eb",), "k", {"v": 1}),
        PutOp(("a",), "k\x1f", {"v": 1}),
        PutOp(("a",), "", {"v": 1}),
        PutOp(("a",), "k" * 500, {"v": 1}),
        PutOp(("a.b",), "k", {"v": 1}),
        PutOp(("",), "k", {"v": 1}),
        PutOp(("langgraph",), "k", {"v": 1}),
        GetOp(("a\x1f",), "k"),
        SearchOp(("a\x1e",)),
    ]
    for op in refused_keys:
        with pytest.raises(MemoryKeyError) as key_info:
            await memory.abatch([PutOp(("ok",), "first", {"v": 1}), op])
        assert (
            isinstance(key_info.value, InvalidNamespaceError)
            and key_info.value.code == "validation_error"
        )
        assert key_info.value.session_id == MEMORY_SESSION
        assert key_info.value.field in ("namespace", "key")
    bad_arguments: list[Op] = [
        PutOp(("a",), "k", {"v": 1}, ttl=-1),
        SearchOp(("a",), limit=-1),
        SearchOp(("a",), filter={"n": {"$regex": "x"}}),
    ]
    for bad in bad_arguments:
        with pytest.raises(ValidationError):
            await memory.abatch([PutOp(("ok",), "first", {"v": 1}), bad])
    assert await _records(store) == before  # no refused batch wrote anything


async def test_sync_methods_run_from_a_thread_not_on_the_loop(store: SessionStateStore) -> None:
    memory = HelixMemoryStore(store)

    def work() -> object:
        memory.put(("s",), "k", {"v": "sync"})
        found = memory.get(("s",), "k")
        return None if found is None else (found.value, [it.key for it in memory.search(("s",))])

    assert await asyncio.to_thread(work) == ({"v": "sync"}, ["k"])
    with pytest.raises(EventLoopError) as info:
        memory.get(("s",), "k")
    assert info.value.code == "langgraph_event_loop"
    with pytest.raises(EventLoopError):
        memory.sweep_ttl()


async def test_corrupt_records_are_named(store: SessionStateStore) -> None:
    memory = HelixMemoryStore(store)
    await memory.aput(("x",), "fine", {"v": 1})
    junk = Record(
        checkpoint_id="m\x1fx\x1f\x1ek\x1f0",
        run_id="r",
        message_count=0,
        state={"junk": 1},
        created_at=datetime.now(UTC),
    )
    await store.save_checkpoint(MEMORY_SESSION, junk)
    with pytest.raises(CorruptRecordError) as info:
        await memory.aget(("x",), "k")
    assert info.value.record == junk.checkpoint_id and info.value.session_id == MEMORY_SESSION
    stray = junk.model_copy(update={"checkpoint_id": "m\x1fzz"})
    await store.save_checkpoint(MEMORY_SESSION, stray)
    with pytest.raises(CorruptRecordError):
        await memory.alist_namespaces()
    fine = await memory.aget(("x",), "fine")
    assert fine is not None and fine.value == {"v": 1}


async def test_foreign_session_and_semantic_index(store: SessionStateStore) -> None:
    await store.create_session(MEMORY_SESSION, metadata=mark("adk"))
    memory = HelixMemoryStore(store)
    with pytest.raises(ForeignSessionError):
        await memory.aput(("f",), "k", {"v": 1})
    assert await memory.aget(("f",), "k") is None
    assert await memory.asearch(()) == []
    mine = HelixMemoryStore(store, session_id="my-memory")  # another session: its own
    await mine.aput(("f",), "k", {"v": 1})
    assert await mine.aget(("f",), "k") is not None
    with pytest.raises(SemanticSearchUnsupportedError) as info:
        HelixMemoryStore(
            store, index={"dims": 3, "embed": lambda texts: [[0.0] * 3 for _ in texts]}
        )
    assert (
        isinstance(info.value, NotImplementedError)
        and info.value.code == "langgraph_semantic_search"
    )
