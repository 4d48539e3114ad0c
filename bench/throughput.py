"""The turn workload on every subject: warm-up, then interleaved repetitions."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .config import Settings
from .stats import Latencies, Spread
from .workload import Subject, Turn, make_turn

__all__ = ["TurnResults", "measure_turns", "run_chunk", "run_turns", "start_sessions"]

log = logging.getLogger("bench.throughput")
_T = TypeVar("_T")


@dataclass(slots=True)
class TurnResults:
    """What one subject did over every repetition."""

    subject: Subject
    per_rep: list[float] = field(default_factory=list)
    append: Latencies = field(default_factory=Latencies)
    read: Latencies = field(default_factory=Latencies)
    rows: int = 0
    storage_bytes: int | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        s = self.subject
        per_row = (
            None if not self.storage_bytes or not self.rows else self.storage_bytes / self.rows
        )
        return {
            "name": s.name,
            "server": s.server,
            "family": s.family,
            "turns_per_s": Spread.of(self.per_rep).as_dict(),
            "turns_per_s_per_rep": self.per_rep,
            "append": self.append.summary(),
            "read": self.read.summary(),
            "rows": self.rows,
            "storage_bytes": self.storage_bytes,
            "bytes_per_row": per_row,
            "error": self.error,
        }


async def start_sessions(subject: Subject, sessions: list[str]) -> None:
    """Create the sessions (never timed)."""
    for sid in sessions:
        await subject.start(sid)


async def run_turns(
    subject: Subject,
    sessions: list[str],
    turns: list[Turn],
    last: int,
    results: TurnResults | None = None,
) -> float:
    """Run ``turns`` round-robin over new, started ``sessions``; return turns per second.

    Every read is checked: it must return ``min(last, rows so far)`` rows.
    """
    elapsed = await run_chunk(subject, sessions, turns, last, dict.fromkeys(sessions, 0), results)
    return len(turns) / elapsed


async def run_chunk(
    subject: Subject,
    sessions: list[str],
    turns: list[Turn],
    last: int,
    counts: dict[str, int],
    results: TurnResults | None = None,
) -> float:
    """Run ``turns`` round-robin over ``sessions``, whose row counts ``counts`` holds (and
    keeps up to date for the next chunk); return the seconds they took."""
    clock = time.perf_counter
    begin = clock()
    for i, turn in enumerate(turns):
        sid = sessions[i % len(sessions)]
        t0 = clock()
        await subject.append(sid, turn, counts[sid])
        t1 = clock()
        got = await subject.read(sid, last)
        t2 = clock()
        counts[sid] += 3
        if got != min(last, counts[sid]):
            raise AssertionError(f"{subject.name}: read {got} rows of {sid}, want {counts[sid]}")
        if results is not None:
            results.append.add(t1 - t0)
            results.read.add(t2 - t1)
    elapsed = clock() - begin
    if results is not None:
        results.rows += 3 * len(turns)
    return elapsed


async def measure_turns(
    subjects: list[Subject],
    settings: Settings,
    between: Callable[[], Awaitable[None]] | None = None,
) -> list[TurnResults]:
    """Warm every subject up, then run the repetitions, every subject's turns in chunks.

    A repetition gives each subject the same turns on new sessions, in chunks of
    ``settings.chunk`` turns taken in turn by every subject (the order rotated
    each repetition), so every subject runs through the same minutes of the
    machine: a subject's turns per second in a repetition are its turns over the
    time its chunks took. ``between`` runs after each repetition (the floors are
    sampled there, so they see the same conditions as the turns).
    """
    results = [TurnResults(s) for s in subjects]
    live = list(results)
    warm = [make_turn(10_000_000 + i) for i in range(settings.warmup_turns)]
    warm_sessions = [f"warm-{i:02d}" for i in range(10)]
    for r in live:
        log.info("warm-up: %s", r.subject.name)
        await start_sessions(r.subject, warm_sessions)
        await run_turns(r.subject, warm_sessions, warm, settings.read_last)
        r.rows += 3 * len(warm)
    for rep in range(settings.repetitions):
        turns = [make_turn(rep * 1_000_000 + i) for i in range(settings.turns)]
        sessions = [f"r{rep}-s{i:02d}" for i in range(settings.sessions)]
        shift = rep % len(live) if live else 0
        order = live[shift:] + live[:shift]
        counts = {id(r): dict.fromkeys(sessions, 0) for r in order}
        took = dict.fromkeys(counts, 0.0)
        for r in order:
            await _guarded(r, start_sessions, r.subject, sessions)
        for start in range(0, len(turns), settings.chunk):
            chunk = turns[start : start + settings.chunk]
            for r in order:
                args = (r.subject, sessions, chunk, settings.read_last, counts[id(r)], r)
                took[id(r)] += await _guarded(r, run_chunk, *args) or 0.0
        for r in order:
            if r.error is None:
                r.per_rep.append(len(turns) / took[id(r)])
                log.info("rep %d: %-30s %8.1f turns/s", rep + 1, r.subject.name, r.per_rep[-1])
        if between is not None:
            await between()
    for r in results:
        if r.error is None:
            r.storage_bytes = await r.subject.storage_bytes()
    return results


async def _guarded(r: TurnResults, step: Callable[..., Awaitable[_T]], *args: Any) -> _T | None:
    """Await ``step(*args)`` unless ``r`` already failed; a failure is kept in ``r.error``."""
    if r.error is not None:
        return None
    try:
        return await step(*args)
    except Exception as exc:
        log.exception("%s failed", r.subject.name)
        r.error = f"{type(exc).__name__}: {exc}"
        return None
