"""The Agents SDK's own runner turn: ``Runner.run`` with each session, on the same server.

A turn is what an application does per user message: ``Runner.run(agent,
text, session=...)`` with an offline model that calls one function tool and
then answers. The runner reads the last ``read_last`` items of history, calls
the model twice and the tool once, and saves the four new items (user message,
call, output, answer). Only the session differs between the subjects of a
server: the SDK's ``SQLiteSession`` / ``RedisSession`` / ``SQLAlchemySession``,
or ``HelixSession`` on our store.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    ModelResponse,
    RunConfig,
    Runner,
    SessionSettings,
    TResponseInputItem,
    Usage,
    function_tool,
)
from agents.models.interface import Model
from agents.tracing import set_tracing_disabled
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseStreamEvent,
)

from .config import Settings
from .stats import Spread
from .systems import SessionSubject
from .workload import make_turn

__all__ = ["measure_runner_turns"]

log = logging.getLogger("bench.sdk_runner")


@function_tool
def lookup_order(order_id: str, fields: list[str]) -> str:
    """The order's fields (the workload's ~500-character tool result)."""
    return make_turn(int(order_id.removeprefix("A-"))).tool_output


class OfflineModel(Model):
    """Calls ``lookup_order`` for a user message, then answers once its output is in."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        last: Any = input[-1] if isinstance(input, list) else {"content": input}
        if last.get("type") == "function_call_output":
            text = ResponseOutputText(
                text="Your order is on its way.", type="output_text", annotations=[]
            )
            item: Any = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            seed = int(str(last["content"])[1:].split("]")[0])
            turn = make_turn(seed)
            item = ResponseFunctionToolCall(
                id=turn.call_id,
                call_id=turn.call_id,
                type="function_call",
                name=turn.tool_name,
                arguments=turn.arguments,
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[ResponseStreamEvent]:
        raise NotImplementedError("the bench runs Runner.run only")


async def _turns(
    subject: SessionSubject, agent: Agent[Any], config: RunConfig, seeds: range, sessions: int
) -> float:
    ids = [f"runner-{seeds.start}-{i:02d}" for i in range(sessions)]
    objects: list[Any] = [subject.session(sid) for sid in ids]
    subject.sessions.update(zip(ids, objects, strict=True))  # closed with the subject
    begin = time.perf_counter()
    for n, seed in enumerate(seeds):
        result = await Runner.run(
            agent, make_turn(seed).user_text, session=objects[n % sessions], run_config=config
        )
        if result.final_output != "Your order is on its way.":
            raise AssertionError(f"{subject.name}: turn {seed} ended with {result.final_output!r}")
    return len(seeds) / (time.perf_counter() - begin)


async def measure_runner_turns(
    subjects: list[SessionSubject], settings: Settings
) -> list[dict[str, Any]]:
    """Turns per second of each (open) subject over interleaved repetitions."""
    set_tracing_disabled(True)
    agent = Agent(name="support", model=OfflineModel(), tools=[lookup_order])
    config = RunConfig(session_settings=SessionSettings(limit=settings.read_last))
    per_rep: dict[str, list[float]] = {s.name: [] for s in subjects}
    errors: dict[str, str] = {}
    for s in subjects:
        log.info("runner warm-up: %s", s.name)
        await _turns(s, agent, config, range(90_000_000, 90_000_000 + 20), settings.sessions // 5)
    for rep in range(settings.repetitions):
        seeds = range(
            80_000_000 + rep * 100_000, 80_000_000 + rep * 100_000 + settings.runner_turns
        )
        shift = rep % len(subjects)
        for s in subjects[shift:] + subjects[:shift]:
            if s.name in errors:
                continue
            try:
                tps = await _turns(s, agent, config, seeds, settings.sessions // 5)
            except Exception as exc:
                log.exception("%s failed", s.name)
                errors[s.name] = f"{type(exc).__name__}: {exc}"
                continue
            per_rep[s.name].append(tps)
            log.info("runner rep %d: %-28s %8.1f turns/s", rep + 1, s.name, tps)
    return [
        {
            "name": s.name,
            "server": s.server,
            "turns_per_s": Spread.of(per_rep[s.name]).as_dict(),
            "turns_per_s_per_rep": per_rep[s.name],
            "error": errors.get(s.name),
        }
        for s in subjects
    ]
