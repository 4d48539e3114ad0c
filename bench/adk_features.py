"""ADK's runner turn with and without what ``HelixPlugin`` adds, so each cost is known.

``python -m bench.adk_features [STORE_URL] [TURNS]`` (default: a SQLite file in a
temporary directory, 200 turns; ``TURNS`` of 20 is a quick run) runs one turn of ADK's
``Runner`` (a user message, one tool call, two model calls, four events; a scripted
``BaseLlm``) on one store, as:

* ``HelixSessionService``: the session service alone;
* ``HelixPlugin static``: plus a run started and finished per turn, fenced events, and
  the queue check before each model call (nothing queued);
* ``+ a context item``: plus one memory recorded and delivered per turn;
* ``HelixPlugin hybrid``: plus the offload check of each tool result (none over the budget);
* ``hybrid, 40,000-char result``: a tool result over the budget, stored and summarised
  (beside ``HelixSessionService`` with the same result, which the model gets whole);
* ``confirmation pause + decide + resume``: a turn whose tool needs confirmation, paused,
  decided and resumed (two ``run_async`` calls).

It prints the store calls of each turn (exact: counted through a proxy of the store, as
each is one round trip on a server backend) and turns per second, the median of 3
repetitions after a warm-up round, the variants in a rotated order each time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, cast

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from helix_agents.adk import (
    HelixPlugin,
    HelixSessionService,
    decide_approval,
    resume_message,
    session_key,
)
from helix_agents.core import ContextItem, SessionStateStore, StoredContextItem, open_store
from helix_agents.core.context import ContextStrategy

from .openai_features import BIG, Counted
from .workload import make_turn

APP, USER = "bench", "user-1"


def lookup_order(order_id: str, fields: list[str]) -> str:
    """The order's fields (the workload's ~500-character tool result)."""
    return make_turn(int(order_id.removeprefix("A-"))).tool_output


def lookup_big(order_id: str, fields: list[str]) -> str:
    """The order's fields, 40,000 characters of them."""
    return BIG


lookup_big.__name__ = "lookup_order"  # the tool the model calls


class Scripted(BaseLlm):
    """Calls ``lookup_order`` for a user message, then answers."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One response, from the request's last part that is not hidden context."""
        parts = [p for c in llm_request.contents for p in c.parts or ()]
        last = next(p for p in reversed(parts) if not (p.text or "").startswith("<context"))
        if last.function_response is not None:
            part = types.Part(text="Your order is on its way.")
        else:
            turn = make_turn(int(str(last.text)[1:].split("]")[0]))
            call = types.FunctionCall(
                name=turn.tool_name, args=json.loads(turn.arguments), id=turn.call_id
            )
            part = types.Part(function_call=call)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


Turn = Callable[[SessionStateStore, str, int], Awaitable[None]]


def _runner(service: BaseSessionService, tool: Any, plugin: HelixPlugin | None) -> Runner:
    agent = LlmAgent(name="support", model=Scripted(), tools=[tool])
    app = App(name=APP, root_agent=agent, plugins=[plugin] if plugin else [])
    return Runner(app=app, session_service=service)


async def _run(runner: Runner, sid: str, message: types.Content) -> None:
    async for _ in runner.run_async(user_id=USER, session_id=sid, new_message=message):
        pass


def _message(seed: int) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=make_turn(seed).user_text)])


def plain(tool: Any) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        await _run(_runner(HelixSessionService(store), tool, None), sid, _message(seed))

    return turn


def in_run(tool: Any, strategy: ContextStrategy, memory: bool = False) -> Turn:
    async def turn(store: SessionStateStore, sid: str, seed: int) -> None:
        plugin = HelixPlugin(store, strategy=strategy)
        if memory:
            item = ContextItem(kind="memory", content=f"fact {seed}", memory_ids=[str(seed)])
            record = StoredContextItem(key=str(seed), item=item, at=datetime.now(UTC))
            await store.record_context_item(session_key(APP, USER, sid), record)
        await _run(_runner(plugin.session_service, tool, plugin), sid, _message(seed))

    return turn


async def confirmed(store: SessionStateStore, sid: str, seed: int) -> None:
    plugin = HelixPlugin(store, strategy="static")
    tool = FunctionTool(lookup_order, require_confirmation=True)
    runner = _runner(plugin.session_service, tool, plugin)
    await _run(runner, sid, _message(seed))
    key = session_key(APP, USER, sid)
    [pending] = await store.list_pending_approvals(key)
    await decide_approval(store, key, pending.approval_id, confirmed=True)
    await _run(runner, sid, await resume_message(store, key))


VARIANTS: list[tuple[str, Turn]] = [
    ("HelixSessionService", plain(lookup_order)),
    ("HelixPlugin static", in_run(lookup_order, "static")),
    ("HelixPlugin static + a context item", in_run(lookup_order, "static", memory=True)),
    ("HelixPlugin hybrid", in_run(lookup_order, "hybrid")),
    ("HelixSessionService, 40,000-char result", plain(lookup_big)),
    ("HelixPlugin hybrid, 40,000-char result", in_run(lookup_big, "hybrid")),
    ("confirmation pause + decide + resume", confirmed),
]


async def main(url: str, turns: int) -> None:
    logging.getLogger("google_adk").setLevel(logging.ERROR)  # its per-call usage warnings
    results: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
    calls: dict[str, float] = {}
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        service = HelixSessionService(store)
        for rep in range(-1, 3):  # a warm-up round first, then three measured
            shift = max(rep, 0) % len(VARIANTS)
            for v, (name, turn) in [*enumerate(VARIANTS)][shift:] + [*enumerate(VARIANTS)][:shift]:
                sids = [f"bench-adk-{tag}-{rep}-{v}-{i}" for i in range(10)]
                for sid in sids:
                    await service.create_session(app_name=APP, user_id=USER, session_id=sid)
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
                    await service.delete_session(app_name=APP, user_id=USER, session_id=sid)
    base = statistics.median(results["HelixSessionService"])
    print(f"{'variant':42} {'store calls':>11} {'turns/s':>8} {'vs HelixSessionService':>23}")
    for name, per_rep in results.items():
        median = statistics.median(per_rep)
        print(f"{name:42} {calls[name]:11.1f} {median:8.1f} {median / base:22.2f}x")


if __name__ == "__main__":
    args = sys.argv[1:]
    target = args[0] if args and args[0] else f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    asyncio.run(main(target, int(args[1]) if len(args) > 1 else 200))
