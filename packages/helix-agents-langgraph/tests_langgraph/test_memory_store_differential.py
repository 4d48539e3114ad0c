"""HelixMemoryStore against LangGraph's InMemoryStore as the model: the same random ops on
both, and every read compared (as sets where the two orders differ, LGM-3)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from helix_backends import Stores
from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from helix_agents.langgraph import HelixMemoryStore

pytestmark = pytest.mark.anyio
NAMESPACES = [("a",), ("a", "b"), ("a", "b", "c"), ("ab",), ("z", "b"), ("z", "ünï")]
KEYS = ["k1", "k2", "k 3", "ключ"]


@pytest.fixture(params=("memory", "sqlite"))
async def helix(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BaseStore]:
    """HelixMemoryStore on a backend that needs no server (the rules run on all four)."""
    stores = Stores(request.param, None, tmp_path)
    try:
        async with stores.store("main") as store:
            yield HelixMemoryStore(store)
    finally:
        stores.purge()


def _seen(items: Sequence[Item]) -> set[tuple[tuple[str, ...], str, str]]:
    return {(item.namespace, item.key, repr(sorted(item.value.items()))) for item in items}


async def _live_namespaces(store: BaseStore) -> list[tuple[str, ...]]:
    """InMemoryStore keeps a namespace whose items were deleted; LGM-4 lists live ones."""
    return sorted({item.namespace for item in await store.asearch((), limit=1000)})


async def test_random_ops_read_the_same(helix: BaseStore) -> None:
    model = InMemoryStore()
    rng = random.Random(30)
    for step in range(150):
        ns, key = rng.choice(NAMESPACES), rng.choice(KEYS)
        roll = rng.random()
        if roll < 0.5:
            value: dict[str, Any] = {"n": rng.randrange(5), "s": rng.choice(["x", "y"]), "i": step}
            for store in (model, helix):
                await store.aput(ns, key, value)
        elif roll < 0.65:
            for store in (model, helix):
                await store.adelete(ns, key)
        elif roll < 0.8:
            got = [await store.aget(ns, key) for store in (model, helix)]
            assert (got[0] is None) == (got[1] is None), (step, ns, key)
            if got[0] is not None and got[1] is not None:
                assert got[1].value == got[0].value and got[1].namespace == got[0].namespace
        else:
            prefix = rng.choice([(), *NAMESPACES])[: rng.randrange(3)]
            wanted = rng.choice([None, {"n": {"$gte": 2}}, {"s": "x"}])
            found = [
                await store.asearch(prefix, filter=wanted, limit=1000) for store in (model, helix)
            ]
            assert _seen(found[1]) == _seen(found[0]), (step, prefix, wanted)
    assert await helix.alist_namespaces(limit=1000) == await _live_namespaces(model)
    everything = await helix.asearch((), limit=1000)
    paged = [
        it
        for offset in range(0, len(everything), 4)
        for it in await helix.asearch((), limit=4, offset=offset)
    ]
    assert paged == everything
