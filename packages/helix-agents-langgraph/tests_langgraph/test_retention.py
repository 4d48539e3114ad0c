"""TTL-7 with LangGraph (docs/lifecycle.md, "Checkpoint retention"): with
``keep_checkpoints`` a thread's records stop growing and a real graph still resumes from
its latest checkpoint, in this process and in a store opened again on the file."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio

KEEP = 12
ROUNDS = 40


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Counter(TypedDict):
    n: Annotated[int, operator.add]
    log: Annotated[list[str], operator.add]


def _graph(saver: HelixCheckpointSaver) -> CompiledStateGraph[Counter]:
    async def step(state: Counter) -> Counter:
        return {"n": 1, "log": [f"step {state['n'] + 1}"]}

    async def check(state: Counter) -> Counter:
        return {"n": 0, "log": []}

    built = StateGraph(Counter)
    built.add_node("step", step)
    built.add_node("check", check)
    built.add_edge(START, "step")
    built.add_edge("step", "check")
    built.add_edge("check", END)
    return built.compile(checkpointer=saver)


async def _records(path: Path, thread: str) -> int:
    async with SQLiteStateStore(path) as store:
        return len(await store.list_checkpoints(thread))


async def test_a_thread_stops_growing_and_still_resumes(tmp_path: Path) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    kept, grown = tmp_path / "kept.db", tmp_path / "grown.db"
    sizes = []
    async with SQLiteStateStore(kept, keep_checkpoints=KEEP) as store:
        graph = _graph(HelixCheckpointSaver(store))
        for r in range(ROUNDS):
            state = await graph.ainvoke({"n": 0, "log": []}, config)
            assert state["n"] == r + 1  # each run resumed from the one before
            sizes.append(len(await store.list_checkpoints("t")))
    assert max(sizes) == KEEP and sizes[-10:] == [KEEP] * 10
    # Without retention the same runs leave far more records.
    async with SQLiteStateStore(grown) as store:
        graph = _graph(HelixCheckpointSaver(store))
        for _ in range(ROUNDS):
            await graph.ainvoke({"n": 0, "log": []}, config)
    assert await _records(grown, "t") > 3 * KEEP
    # Opened again: the latest state is there and the graph goes on from it.
    async with SQLiteStateStore(kept, keep_checkpoints=KEEP) as store:
        graph = _graph(HelixCheckpointSaver(store))
        snapshot = await graph.aget_state(config)
        assert snapshot.values["n"] == ROUNDS and len(snapshot.values["log"]) == ROUNDS
        state = await graph.ainvoke({"n": 0, "log": []}, config)
        assert state["n"] == ROUNDS + 1 and state["log"][-1] == f"step {ROUNDS + 1}"
        history = [c async for c in graph.aget_state_history(config)]
        assert 1 <= len(history) < KEEP
    assert await _records(kept, "t") == KEEP
