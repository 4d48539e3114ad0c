"""LGF-13: ``afork_thread`` branches a thread at a checkpoint (LangGraph's time travel
into a new thread) with the store's ``fork_session``, on each of the four backends."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from helix_fixtures import store, stores
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from helix_agents.core import SessionExistsError, SessionStateStore, ValidationError
from helix_agents.langgraph import HelixCheckpointSaver

__all__ = ["store", "stores"]  # the shared fixtures, on four backends

pytestmark = pytest.mark.anyio


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _step(state: Log) -> dict[str, Any]:
    return {"log": [f"step{len(state['log'])}"]}


def _graph(saver: HelixCheckpointSaver) -> Any:
    builder = StateGraph(Log)
    builder.add_node("step", _step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=saver)


def _thread(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


async def test_lgf13_a_fork_resumes_from_its_checkpoint_in_a_new_thread(
    store: SessionStateStore,
) -> None:
    saver = HelixCheckpointSaver(store)
    graph = _graph(saver)
    for turn in ("a", "b", "c"):
        await graph.ainvoke({"log": [turn]}, _thread("t"))
    source_latest = await graph.aget_state(_thread("t"))
    history = [s async for s in graph.aget_state_history(_thread("t"))]
    (point,) = [s for s in history if s.values.get("log") == ["a", "step1"] and not s.next]
    forked = await saver.afork_thread(point.config, "t-branch")
    assert forked["configurable"]["thread_id"] == "t-branch"
    assert forked["configurable"]["checkpoint_id"] == point.config["configurable"]["checkpoint_id"]
    # The branch's latest state is the fork point: nothing after it was carried.
    assert (await graph.aget_state(_thread("t-branch"))).values == point.values
    ids = [
        s.config["configurable"]["checkpoint_id"]
        async for s in graph.aget_state_history(_thread("t-branch"))
    ]
    kept = [s.config["configurable"]["checkpoint_id"] for s in history]
    assert ids == [i for i in kept if i <= point.config["configurable"]["checkpoint_id"]]
    # It runs on from there; the source is unchanged.
    await graph.ainvoke({"log": ["x"]}, _thread("t-branch"))
    assert (await graph.aget_state(_thread("t-branch"))).values == {
        "log": ["a", "step1", "x", "step3"]
    }
    assert (await graph.aget_state(_thread("t"))).values == source_latest.values
    (branch,) = await store.list_branches("t")
    assert (branch.session_id, branch.parent_id) == ("t-branch", "t")
    info = await store.get_session("t-branch")
    assert info is not None and info.branch_of == branch


async def test_lgf13_a_bad_fork_writes_nothing(store: SessionStateStore) -> None:
    saver = HelixCheckpointSaver(store)
    graph = _graph(saver)
    await graph.ainvoke({"log": ["a"]}, _thread("t"))
    await graph.ainvoke({"log": ["a"]}, _thread("taken"))
    missing: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_id": "nope"}}
    with pytest.raises(ValidationError):
        await saver.afork_thread(missing, "t2")
    with pytest.raises(SessionExistsError):
        await saver.afork_thread(_thread("t"), "taken")
    assert await store.get_session("t2") is None
    assert await store.list_branches("t") == []
    latest = await saver.afork_thread(_thread("t"), "t3")  # no checkpoint id: the latest
    assert (await graph.aget_state(latest)).values == (await graph.aget_state(_thread("t"))).values
