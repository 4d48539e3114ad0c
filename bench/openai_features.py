"""The SDK's runner turn with and without what ``HelixRun`` adds, so each cost is known.

``python -m bench.openai_features [STORE_URL] [TURNS]`` (default: a SQLite file in a
temporary directory, 200 turns) runs the turn of ``bench.sdk_runner`` (one tool call, two
model calls, four items saved; the SDK's scripted test model) on one store, as:

* ``HelixSession``: the session alone;
* ``HelixRun static``: plus a run started and finished per turn, fenced writes, and the
  queue check before each model call (nothing queued);
* ``+ a context item``: plus one memory recorded and delivered per turn;
* ``HelixRun hybrid``: plus the offload check of each tool output (none over the budget);
* ``hybrid, 40,000-char output``: a tool output over the budget, stored and summarised
  (beside ``HelixSession`` with the same output, which the model gets whole);
* ``approval pause + decide + resume``: a turn whose tool needs approval, paused, decided
  and resumed (two ``Runner.run`` calls).

It prints the store calls of each turn (exact: counted through a proxy of the store, as
each is one round trip on a server backend) and turns per second, the median of 3
repetitions after a warm-up round, the variants in a rotated order each time (results
vary with the machine's load).
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

from agents import Agent, Runner, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tracing import set_tracing_disabled

from helix_agents.core import ContextItem, SessionStateStore, StoredContextItem, open_store
from helix_agents.openai_agents import HelixRun, HelixSession, decide_approval

from .workload import make_turn

BIG = "\n".join(f"{n:05d} " + "x" * 74 for n in range(500))  # 40,000 characters


@function_tool
def lookup_order(order_id: str, fields: list[str]) -> str:
    """The order's fields (the workload's ~500-character tool result)."""
    return make_turn(int(order_id.removeprefix("A-"))).tool_output


@function_tool(name_override="lookup_order")
def lookup_big(order_id: str, fields: list[str]) -> str:
    """The order's fields, 40,000 characters of them."""
    return BIG


@function_tool(name_override="lookup_order", needs_approval=True)
def lookup_approved(order_id: str, fields: list[str]) -> str:
    """The order's fields, once a person approved."""
    return make_turn(int(order_id.removeprefix("A-"))).tool_output


Turn = Callable[[SessionStateStore, str, int], Awaitable[None]]


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


def _reply(call: ModelCall) -> list[Any]:
    """``bench.sdk_runner``'s model: call ``lookup_order`` for a user message, then answer."""
    shown: list[Any] = call.input
    last = next(i for i in reversed(shown) if not str(i.get("content", "")).startswith("<context"))
    if last.get("type") == "function_call_output":
        return [assistant_message("Your order is on its way.")]
    turn = make_turn(int(str(last["content"])[1:].split("]")[0]))
    return [function_call(turn.tool_name, json.loads(turn.arguments), call_id=turn.call_id)]


def _agent(tool: Any) -> Agent[Any]:
    model = ScriptedModel([ModelStep.respond(_reply), ModelStep.respond(_reply)])
    return Agent(name="support", model=model, tools=[tool])


def plain(tool: Any) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        await Runner.run(_agent(tool), make_turn(seed).user_text, session=HelixSession(sid, store))

    return turn


def in_run(tool: Any, strategy: Any, memory: bool = False) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        async with HelixRun(store, sid, strategy=strategy) as run:
            if memory:
                item = ContextItem(kind="memory", content=f"fact {seed}", memory_ids=[str(seed)])
                at = datetime.now(UTC)
                await store.record_context_item(
                    sid, StoredContextItem(key=str(seed), item=item, at=at)
                )
            await Runner.run(
                _agent(tool),
                make_turn(seed).user_text,
                session=run.session,
                run_config=run.run_config,
            )

    return turn


async def approved(store: SessionStateStore, sid: str, seed: int) -> None:
    agent = _agent(lookup_approved)
    async with HelixRun(store, sid, strategy="static") as run:
        result = await Runner.run(
            agent, make_turn(seed).user_text, session=run.session, run_config=run.run_config
        )
        [pending] = await run.pause(result)
    await decide_approval(store, sid, pending.approval_id, approve=True)
    async with HelixRun(store, sid, resume=True) as run:
        state = await run.resume_state(agent)
        await Runner.run(agent, state, session=run.session, run_config=run.run_config)


VARIANTS: list[tuple[str, Turn]] = [
    ("HelixSession", plain(lookup_order)),
    ("HelixRun static", in_run(lookup_order, "static")),
    ("HelixRun static + a context item", in_run(lookup_order, "static", memory=True)),
    ("HelixRun hybrid", in_run(lookup_order, "hybrid")),
    ("HelixSession, 40,000-char output", plain(lookup_big)),
    ("HelixRun hybrid, 40,000-char output", in_run(lookup_big, "hybrid")),
    ("approval pause + decide + resume", approved),
]


async def main(url: str, turns: int) -> None:
    set_tracing_disabled(True)
    results: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
    calls: dict[str, float] = {}
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        for rep in range(-1, 3):  # a warm-up round first, then three measured
            shift = max(rep, 0) % len(VARIANTS)
            for v, (name, turn) in [*enumerate(VARIANTS)][shift:] + [*enumerate(VARIANTS)][:shift]:
                sids = [f"bench-oai-{tag}-{rep}-{v}-{i}" for i in range(10)]
                for sid in sids:
                    await store.create_session(sid)
                count = turns if rep >= 0 else 10
                begin = time.perf_counter()
                for n in range(count):
                    await turn(store, sids[n % len(sids)], 10_000_000 + n)
                if rep >= 0:
                    results[name].append(count / (time.perf_counter() - begin))
                else:
                    counted = Counted(store)
                    for n in range(10):
                        await turn(cast(SessionStateStore, counted), sids[n], 20_000_000 + n)
                    calls[name] = counted.calls / 10
                for sid in sids:
                    await store.delete_session(sid)
    base = statistics.median(results["HelixSession"])
    print(f"{'variant':38} {'store calls':>11} {'turns/s':>8} {'vs HelixSession':>16}")
    for name, per_rep in results.items():
        median = statistics.median(per_rep)
        print(f"{name:38} {calls[name]:11.1f} {median:8.1f} {median / base:15.2f}x")


if __name__ == "__main__":
    args = sys.argv[1:]
    target = args[0] if args and args[0] else f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    asyncio.run(main(target, int(args[1]) if len(args) > 1 else 200))
