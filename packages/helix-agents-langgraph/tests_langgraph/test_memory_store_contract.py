"""LangGraph's ``BaseStore`` contract, restated from its docstrings, on LangGraph's own
``InMemoryStore`` and on ``HelixMemoryStore`` on each backend: the same assertions pass on
all five.

langgraph-checkpoint's sdist ships tests/test_store.py, but it builds ``InMemoryStore()``
in each test and is mostly vector search, which HelixMemoryStore does not have (LGM-7).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helix_backends import BACKENDS, Stores
from helix_fixtures import found_server
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp
from langgraph.store.memory import InMemoryStore

from helix_agents.langgraph import HelixMemoryStore

pytestmark = pytest.mark.anyio


@pytest.fixture(params=("langgraph", *BACKENDS))
async def memory(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BaseStore]:
    """LangGraph's InMemoryStore, or HelixMemoryStore on one backend's fresh data."""
    if request.param == "langgraph":
        yield InMemoryStore()
        return
    stores = Stores(request.param, found_server(request, request.param), tmp_path)
    try:
        async with stores.store("main") as store:
            yield HelixMemoryStore(store)
    finally:
        stores.purge()


async def test_put_get_and_overwrite(memory: BaseStore) -> None:
    assert await memory.aget(("users", "ada"), "prefs") is None
    await memory.aput(("users", "ada"), "prefs", {"tea": "green", "n": [1, 2.5, None, True]})
    first = await memory.aget(("users", "ada"), "prefs")
    assert first is not None
    assert (first.namespace, first.key) == (("users", "ada"), "prefs")
    assert first.value == {"tea": "green", "n": [1, 2.5, None, True]}
    assert first.created_at <= first.updated_at
    await memory.aput(("users", "ada"), "prefs", {"tea": "black"})
    second = await memory.aget(("users", "ada"), "prefs")
    assert second is not None and second.value == {"tea": "black"}
    assert second.updated_at >= first.updated_at  # (created_at: LGM-1 keeps it, the test of rules)
    assert await memory.aget(("users",), "prefs") is None  # a namespace is not a prefix here
    assert await memory.aget(("users", "ada"), "other") is None


async def test_delete_and_put_none(memory: BaseStore) -> None:
    await memory.aput(("n",), "a", {"v": 1})
    await memory.aput(("n",), "b", {"v": 2})
    await memory.adelete(("n",), "a")
    await memory.abatch([PutOp(("n",), "b", None)])
    await memory.adelete(("n",), "never-there")  # no error
    assert await memory.aget(("n",), "a") is None
    assert await memory.aget(("n",), "b") is None
    assert await memory.asearch(("n",)) == []


async def test_search_is_by_namespace_prefix_label_by_label(memory: BaseStore) -> None:
    await memory.aput(("docs",), "root", {"i": 0})
    await memory.aput(("docs", "a"), "x", {"i": 1})
    await memory.aput(("docs", "a", "deep"), "y", {"i": 2})
    await memory.aput(("docsx",), "z", {"i": 3})
    found = {(it.namespace, it.key) for it in await memory.asearch(("docs",), limit=50)}
    assert found == {(("docs",), "root"), (("docs", "a"), "x"), (("docs", "a", "deep"), "y")}
    assert {it.key for it in await memory.asearch(("docs", "a"), limit=50)} == {"x", "y"}
    assert {it.key for it in await memory.asearch((), limit=50)} == {"root", "x", "y", "z"}
    assert await memory.asearch(("nothing",)) == []


async def test_search_pages_cover_the_listing_once(memory: BaseStore) -> None:
    for i in range(12):
        await memory.aput(("p", str(i % 3)), f"k{i:02}", {"i": i})
    everything = [(it.namespace, it.key) for it in await memory.asearch(("p",), limit=100)]
    assert len(everything) == 12
    pages = []
    for offset in range(0, 12, 5):
        pages += [
            (it.namespace, it.key) for it in await memory.asearch(("p",), limit=5, offset=offset)
        ]
    assert pages == everything
    assert len(await memory.asearch(("p",), limit=3)) == 3
    assert await memory.asearch(("p",), limit=5, offset=12) == []


async def test_search_filters(memory: BaseStore) -> None:
    await memory.aput(("f",), "a", {"color": "red", "score": 4.5, "meta": {"lang": "en", "v": 1}})
    await memory.aput(("f",), "b", {"color": "blue", "score": 3, "tags": ["x", "y"]})
    await memory.aput(("f",), "c", {"color": "red", "score": 1, "meta": {"lang": "fr"}})

    async def keys(wanted: dict[str, object]) -> set[str]:
        return {it.key for it in await memory.asearch(("f",), filter=wanted, limit=50)}

    assert await keys({"color": "red"}) == {"a", "c"}
    assert await keys({"color": "red", "score": {"$gt": 2}}) == {"a"}
    assert await keys({"score": {"$gte": 3}}) == {"a", "b"}
    assert await keys({"score": {"$lt": 3}}) == {"c"}
    assert await keys({"score": {"$lte": 3}}) == {"b", "c"}
    assert await keys({"color": {"$ne": "red"}}) == {"b"}
    assert await keys({"color": {"$eq": "blue"}}) == {"b"}
    assert await keys({"meta": {"lang": "en"}}) == {"a"}  # nested: part by part
    assert await keys({"tags": ["x", "y"]}) == {"b"}
    assert await keys({"tags": ["x"]}) == set()
    assert await keys({"missing": "field"}) == set()


async def test_list_namespaces(memory: BaseStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b"), ("z", "q", "v1")]:
        await memory.aput(ns, "k", {"v": 1})
    assert await memory.alist_namespaces() == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "x"),
        ("z", "b"),
        ("z", "q", "v1"),
    ]
    assert await memory.alist_namespaces(prefix=("a",)) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "x"),
    ]
    assert await memory.alist_namespaces(prefix=("a", "*", "d")) == [("a", "b", "d")]
    assert await memory.alist_namespaces(suffix=("b",)) == [("z", "b")]
    assert await memory.alist_namespaces(suffix=("*", "v1")) == [("z", "q", "v1")]
    assert await memory.alist_namespaces(prefix=("a",), suffix=("c",)) == [("a", "b", "c")]
    assert await memory.alist_namespaces(max_depth=1) == [("a",), ("z",)]
    assert await memory.alist_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "x")]
    assert await memory.alist_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x")]


async def test_batch_results_in_order(memory: BaseStore) -> None:
    await memory.aput(("b",), "old", {"v": 0})
    results = await memory.abatch(
        [
            GetOp(("b",), "old"),
            PutOp(("b",), "new", {"v": 1}),
            GetOp(("b",), "absent"),
            ListNamespacesOp(),
        ]
    )
    first = results[0]
    assert first is not None and not isinstance(first, list) and first.value == {"v": 0}
    assert results[1:] == [None, None, [("b",)]]
    found = await memory.aget(("b",), "new")
    assert found is not None and found.value == {"v": 1}


REFUSED = [
    (),
    ("",),
    ("a", ""),
    ("a.b",),
    ("a", "b.c"),
    ("langgraph",),
    ("langgraph", "x"),
    ("a\x00",),
]


async def test_namespaces_langgraph_refuses(memory: BaseStore) -> None:
    for namespace in REFUSED:
        with pytest.raises(InvalidNamespaceError):
            await memory.aput(namespace, "k", {"v": 1})
    assert await memory.asearch((), limit=50) == []
