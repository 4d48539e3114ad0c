"""Agent Framework chat history: ``HelixHistoryProvider`` beside the framework's own providers.

One conversation per provider grows by ``maf_turns`` turns, each saved as an agent run
saves it (``save_messages`` of the user's message and the answer, with the state of the
run's load), every save timed; then ``get_messages`` of the whole conversation is timed
``maf_ops`` times. The framework's ``InMemoryHistoryProvider`` (its default: the
session's state, no I/O) and ``FileHistoryProvider`` (a JSON Lines file per session, on
the run's work directory) run beside ours on SQLite, PostgreSQL and Redis, interleaved so
noise hits all alike.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from agent_framework import FileHistoryProvider, HistoryProvider, InMemoryHistoryProvider, Message

from helix_agents.agent_framework import HelixHistoryProvider

from .config import Servers, Settings
from .stats import Latencies
from .systems import helix_subject
from .systems.ours import HelixSubject

__all__ = ["measure_agent_framework"]

log = logging.getLogger("bench.agent_framework")

SESSION = "session-1"
_OPS = ("save_messages (a turn)", "get_messages (all)")


def _turn(step: int) -> list[Message]:
    text = f"turn {step}: " + "lorem ipsum " * 8
    return [Message("user", [text]), Message("assistant", [f"answer {step}: {text}"])]


async def _run(providers: dict[str, HistoryProvider], settings: Settings) -> dict[str, Any]:
    states: dict[str, dict[str, Any]] = {name: {} for name in providers}
    lat = {name: {op: Latencies() for op in _OPS} for name in providers}
    clock = time.perf_counter
    for name, provider in providers.items():
        await provider.get_messages(SESSION, state=states[name])
    for step in range(settings.maf_turns):
        for name, provider in providers.items():
            turn = _turn(step)
            t0 = clock()
            await provider.save_messages(SESSION, turn, state=states[name])
            lat[name][_OPS[0]].add(clock() - t0)
    for _ in range(settings.maf_ops):
        for name, provider in providers.items():
            t0 = clock()
            got = await provider.get_messages(SESSION, state=states[name])
            lat[name][_OPS[1]].add(clock() - t0)
            if len(got) != 2 * settings.maf_turns:
                raise AssertionError(f"{name}: {len(got)} messages read back")
    return {name: {op: s.summary() for op, s in by_op.items()} for name, by_op in lat.items()}


async def measure_agent_framework(
    settings: Settings, servers: Servers, workdir: Path
) -> dict[str, Any]:
    """Per provider: p50/p99 of a turn's save and of a read of the whole conversation."""
    subjects: list[HelixSubject] = []
    providers: dict[str, HistoryProvider] = {
        "maf in-memory": InMemoryHistoryProvider(),
        "maf file": FileHistoryProvider(workdir / "maf_history"),
    }
    try:
        for server in ("sqlite", "postgres", "redis"):
            subject = helix_subject(server, servers, workdir, "_maf")
            await subject.open()
            subjects.append(subject)
            providers[subject.name] = HelixHistoryProvider(subject.store)
        log.info("agent-framework: %s", ", ".join(providers))
        return await _run(providers, settings)
    finally:
        for subject in subjects:
            await subject.close()
