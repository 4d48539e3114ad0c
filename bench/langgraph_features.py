"""A LangGraph agent turn with and without what ``HelixGraphRun`` adds, so each cost is known.

``python -m bench.langgraph_features [STORE_URL] [TURNS]`` (default: a SQLite file in a
temporary directory, 200 turns) runs one agent turn — a ``StateGraph`` of the model node and
LangGraph's ``ToolNode``, one tool call, two model calls (a scripted chat model), the
workload's ~500-character tool result — on ``HelixCheckpointSaver`` over one store, as:

* ``saver alone``: the graph without a run, invoked with a thread id;
* ``HelixGraphRun static``: plus the ``helix_context`` node before each model call, a run
  started and finished per turn, fenced saver writes (nothing queued);
* ``+ a context item``: plus one memory recorded and delivered per turn;
* ``HelixGraphRun hybrid``: plus the offload check of each tool output (none over the budget);
* ``hybrid, 40,000-char output``: a tool output over the budget, stored and summarised
  (beside ``saver alone`` with the same output, which the model gets whole);
* ``interrupt pause + answer + resume``: a turn whose tool interrupts, paused, answered and
  resumed (two invocations).

It prints the store calls of each turn (exact: counted through a proxy of the store, as each
is one round trip on a server backend) and turns per second, the median of 3 repetitions
after a warm-up round, the variants in a rotated order each time (results vary with the
machine's load).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from helix_agents.core import ContextItem, SessionStateStore, StoredContextItem, open_store
from helix_agents.langgraph import (
    CONTEXT_TOOLS,
    HelixCheckpointSaver,
    HelixGraphRun,
    decide_approval,
    helix_context,
)

from .workload import make_turn

BIG = "\n".join(f"{n:05d} " + "x" * 74 for n in range(500))  # 40,000 characters


@tool
def lookup_order(order_id: str, fields: list[str]) -> str:
    """The order's fields (the workload's ~500-character tool result)."""
    return make_turn(int(order_id.removeprefix("A-"))).tool_output


@tool("lookup_order")
def lookup_big(order_id: str, fields: list[str]) -> str:
    """The order's fields, 40,000 characters of them."""
    return BIG


@tool("lookup_order")
def lookup_approved(order_id: str, fields: list[str]) -> str:
    """The order's fields, once a person approved."""
    answer = interrupt({"tool": "lookup_order", "order_id": order_id})
    return make_turn(int(order_id.removeprefix("A-"))).tool_output if answer else "refused"


class Support(BaseChatModel):
    """``bench.sdk_runner``'s model: call ``lookup_order`` for a user message, then answer."""

    @property
    def _llm_type(self) -> str:
        return "bench-support"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = next(m for m in reversed(messages) if not str(m.content).startswith("<context"))
        if isinstance(last, ToolMessage):
            reply = AIMessage("Your order is on its way.")
        else:
            assert isinstance(last, HumanMessage)
            turn = make_turn(int(str(last.content)[1:].split("]")[0]))
            call = {"name": turn.tool_name, "args": json.loads(turn.arguments), "id": turn.call_id}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


MODEL = Support()
Turn = Callable[[SessionStateStore, str, int], Awaitable[None]]
_graphs: dict[tuple[int, str, bool], Any] = {}


def _graph(store: SessionStateStore, action: BaseTool, with_run: bool) -> Any:
    """The agent graph on ``store``, compiled once per store, tool and shape."""
    key = (id(store), action.description, with_run)
    if key not in _graphs:

        async def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await MODEL.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode([action, *CONTEXT_TOOLS]))
        if with_run:
            builder.add_node("context", helix_context)
            builder.add_edge(START, "context")
            builder.add_edge("context", "agent")
            builder.add_edge("tools", "context")
        else:
            builder.add_edge(START, "agent")
            builder.add_edge("tools", "agent")
        builder.add_conditional_edges("agent", tools_condition, ["tools", END])
        _graphs[key] = builder.compile(checkpointer=HelixCheckpointSaver(store))
    return _graphs[key]


def plain(action: BaseTool) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        config = {"configurable": {"thread_id": sid}}
        await _graph(store, action, False).ainvoke(
            {"messages": [("user", make_turn(seed).user_text)]}, config
        )

    return turn


def in_run(action: BaseTool, strategy: Any, memory: bool = False) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        async with HelixGraphRun(store, sid, strategy=strategy) as run:
            if memory:
                item = ContextItem(kind="memory", content=f"fact {seed}", memory_ids=[str(seed)])
                at = datetime.now(UTC)
                await store.record_context_item(
                    sid, StoredContextItem(key=str(seed), item=item, at=at)
                )
            await _graph(store, action, True).ainvoke(
                {"messages": [("user", make_turn(seed).user_text)]}, run.config
            )

    return turn


async def approved(store: SessionStateStore, sid: str, seed: int) -> None:
    graph = _graph(store, lookup_approved, True)
    async with HelixGraphRun(store, sid, strategy="static") as run:
        await graph.ainvoke({"messages": [("user", make_turn(seed).user_text)]}, run.config)
        [pending] = await run.pause(graph)
    await decide_approval(store, sid, pending.approval_id, True)
    async with HelixGraphRun(store, sid, resume=True) as run:
        await graph.ainvoke(await run.resume_command(), run.config)


VARIANTS: list[tuple[str, Turn]] = [
    ("saver alone", plain(lookup_order)),
    ("HelixGraphRun static", in_run(lookup_order, "static")),
    ("HelixGraphRun static + a context item", in_run(lookup_order, "static", memory=True)),
    ("HelixGraphRun hybrid", in_run(lookup_order, "hybrid")),
    ("saver alone, 40,000-char output", plain(lookup_big)),
    ("HelixGraphRun hybrid, 40,000-char output", in_run(lookup_big, "hybrid")),
    ("interrupt pause + answer + resume", approved),
]


class Counted:
    """The store, counting the calls of its methods."""

    def __init__(self, store: SessionStateStore) -> None:
        self._store = store
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return found(*args, **kwargs)

        return counted


async def main(url: str, turns: int) -> None:
    results: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
    calls: dict[str, float] = {}
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        counted = Counted(store)
        for rep in range(-1, 3):  # a warm-up round first, then three measured
            shift = max(rep, 0) % len(VARIANTS)
            for v, (name, turn) in [*enumerate(VARIANTS)][shift:] + [*enumerate(VARIANTS)][:shift]:
                sids = [f"bench-lg-{tag}-{rep}-{v}-{i}" for i in range(10)]
                count = turns if rep >= 0 else 10
                begin = time.perf_counter()
                for n in range(count):
                    await turn(store, sids[n % len(sids)], 10_000_000 + n)
                if rep >= 0:
                    results[name].append(count / (time.perf_counter() - begin))
                else:
                    counted.calls = 0
                    for n in range(10):
                        await turn(cast(SessionStateStore, counted), sids[n], 20_000_000 + n)
                    calls[name] = counted.calls / 10
                for sid in sids:
                    await store.delete_session(sid)
    base = statistics.median(results["saver alone"])
    print(f"{'variant':42} {'store calls':>11} {'turns/s':>8} {'vs saver alone':>15}")
    for name, per_rep in results.items():
        median = statistics.median(per_rep)
        print(f"{name:42} {calls[name]:11.1f} {median:8.1f} {median / base:14.2f}x")


if __name__ == "__main__":
    args = sys.argv[1:]
    target = args[0] if args and args[0] else f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    asyncio.run(main(target, int(args[1]) if len(args) > 1 else 200))
