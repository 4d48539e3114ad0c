"""Throughput of one task against 16 tasks on distinct sessions, on one store instance."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from .config import Settings
from .stats import Spread
from .throughput import TurnResults, run_turns, start_sessions
from .workload import Subject, make_turn

__all__ = ["measure_concurrency"]

log = logging.getLogger("bench.concurrency")

_SESSIONS_PER_TASK = 4


async def _round(
    subject: Subject, settings: Settings, tasks: int, tag: str, results: TurnResults
) -> float:
    """Turns per second with ``tasks`` tasks, each on sessions of its own."""
    width = settings.concurrency_tasks * _SESSIONS_PER_TASK
    sessions = [f"{tag}-{i:03d}" for i in range(width)]
    await start_sessions(subject, sessions)
    turns = [make_turn(i) for i in range(settings.concurrency_turns)]
    share = len(turns) // tasks
    lanes = [sessions[t::tasks] for t in range(tasks)]
    begin = time.perf_counter()
    await asyncio.gather(
        *(
            run_turns(
                subject, lanes[t], turns[t * share : (t + 1) * share], settings.read_last, results
            )
            for t in range(tasks)
        )
    )
    return share * tasks / (time.perf_counter() - begin)


async def measure_concurrency(subject: Subject, settings: Settings) -> dict[str, Any]:
    """Alternate 1-task and N-task rounds; turns/s of each and their ratio per repetition."""
    many = settings.concurrency_tasks
    single, multi = TurnResults(subject), TurnResults(subject)
    # Warm up with every task, so the pool has grown before anything is timed.
    await _round(subject, settings, many, "conc-warm", TurnResults(subject))
    ratios: list[float] = []
    for rep in range(settings.concurrency_repetitions):
        one = await _round(subject, settings, 1, f"conc{rep}-1", single)
        lots = await _round(subject, settings, many, f"conc{rep}-{many}", multi)
        single.per_rep.append(one)
        multi.per_rep.append(lots)
        ratios.append(lots / one)
        log.info("%s: 1 task %.0f turns/s, %d tasks %.0f turns/s", subject.name, one, many, lots)
    return {
        "tasks": many,
        "single": single.as_dict(),
        "multi": multi.as_dict(),
        "ratio": Spread.of(ratios).as_dict(),
    }
