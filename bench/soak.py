"""``python -m bench.soak``: storage stays flat under expiry (docs/lifecycle.md, "Expiry").

Runs ``--turns`` agent turns on sessions that come and go: ``--slots`` sessions are
active at once, each takes ``--turns-per-session`` turns (a user row, an assistant row
and a checkpoint), then is left to expire after ``idle_ttl``. The store runs with
``idle_ttl``, ``keep_checkpoints`` and its background sweeper, and the script sweeps
too, every ``--sweep-every`` turns. The store's clock is simulated (one second per
turn), so a million turns need no million seconds. The storage is sampled
``--samples`` times: SQLite's pages in use, PostgreSQL's relation sizes, Redis's keys
and memory, the memory store's sessions. After warm-up (the first ``--warmup`` share
of the turns) no sample may exceed the warm-up's largest by more than ``--tolerance``:
else the exit status is 1.

``make soak`` runs a million turns on SQLite; ``repo_tests/test_soak.py`` a sample.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from helix_agents.core import ChatMessage, Checkpoint, MessageCommit, open_store
from helix_agents.core.backend import StoreBase

PG_URL = "postgresql://127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"
IDLE_TTL = 300.0  # simulated seconds; a turn is one
KEEP_CHECKPOINTS = 5


class SimulatedClock:
    """The store's clock: one second per turn."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Soak:
    """One soak run's settings and what it measured."""

    backend: str
    turns: int
    slots: int = 50
    turns_per_session: int = 20
    sweep_every: int = 1_000
    samples: int = 50
    warmup: float = 0.4
    tolerance: float = 0.25
    measured: list[tuple[int, int, int]] = field(default_factory=list)  # turn, size, sessions
    seconds: float = 0.0

    def verdict(self) -> tuple[bool, int, int]:
        """Whether every sample after warm-up is within the bound; the bound; the peak after."""
        cut = self.turns * self.warmup
        warm = [size for turn, size, _ in self.measured if turn <= cut]
        late = [size for turn, size, _ in self.measured if turn > cut]
        bound = int(max(warm) * (1 + self.tolerance))
        peak = max(late, default=0)
        return peak <= bound, bound, peak


async def _sizer(backend: str, store: StoreBase, place: str) -> Callable[[], Awaitable[int]]:
    """How to measure the storage of ``backend``."""
    if backend == "sqlite":

        async def sqlite_pages() -> int:
            with sqlite3.connect(f"file:{place}?mode=ro", uri=True) as db:
                pages = db.execute("PRAGMA page_count").fetchone()[0]
                free = db.execute("PRAGMA freelist_count").fetchone()[0]
            return int(pages - free)

        return sqlite_pages
    if backend == "postgres":
        from .storage import postgres_schema_bytes

        async def pg_bytes() -> int:
            return await postgres_schema_bytes(PG_URL, place)

        return pg_bytes
    if backend == "redis":
        from redis.asyncio import Redis

        async def redis_keys() -> int:
            async with Redis.from_url(REDIS_URL) as client:
                return sum([1 async for _ in client.scan_iter(match=f"{place}:*", count=1000)])

        return redis_keys

    from helix_agents.store_memory import MemoryStateStore

    async def memory_sessions() -> int:
        assert isinstance(store, MemoryStateStore)
        return len(store.data.sessions)

    return memory_sessions


def _url(backend: str, workdir: Path) -> tuple[str, str, dict[str, Any]]:
    """The store URL, the place its data lives (file, schema, key prefix), extra options."""
    tag = uuid.uuid4().hex[:8]
    if backend == "sqlite":
        path = workdir / f"soak-{tag}.db"
        return f"sqlite:///{path}", str(path), {}
    if backend == "postgres":
        schema = f"soak_{tag}"
        return f"{PG_URL}?schema={schema}&auto_migrate=1", schema, {}
    if backend == "redis":
        return f"{REDIS_URL}?key_prefix=soak{tag}", f"soak{tag}", {}
    return "memory://", "", {}


async def _cleanup(backend: str, place: str) -> None:
    if backend == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(PG_URL, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{place}" CASCADE')
    elif backend == "redis":
        from redis.asyncio import Redis

        async with Redis.from_url(REDIS_URL) as client:
            keys = [k async for k in client.scan_iter(match=f"{place}:*", count=1000)]
            for n in range(0, len(keys), 500):
                await client.delete(*keys[n : n + 500])


async def run_soak(soak: Soak, workdir: Path, progress: bool = False) -> Soak:
    """Run the turns, sampling the storage; fills ``soak.measured`` and ``soak.seconds``."""
    url, place, extra = _url(soak.backend, workdir)
    clock = SimulatedClock()
    options: dict[str, Any] = {
        "clock": clock,
        "keep_checkpoints": KEEP_CHECKPOINTS,
        "sweep_interval": 0.5,
        **extra,
    }
    if soak.backend != "redis":
        options["idle_ttl"] = IDLE_TTL
    every = max(1, soak.turns // soak.samples)
    started = time.perf_counter()
    try:
        async with open_store(url, **options) as store:
            assert isinstance(store, StoreBase)
            size = await _sizer(soak.backend, store, place)
            sessions: dict[int, str] = {}
            for turn in range(1, soak.turns + 1):
                clock.now += timedelta(seconds=1)
                slot = turn % soak.slots
                sid = sessions.get(slot)
                if sid is None or turn // soak.slots % soak.turns_per_session == 0:
                    sid = sessions[slot] = f"s{turn}"
                    await store.create_session(sid, user_id=f"u{slot}")
                    if soak.backend == "redis":  # Redis's own idle_ttl runs on server time
                        await store.set_session_expiry(sid, idle_ttl=IDLE_TTL)
                rows = (
                    ChatMessage(role="user", content=f"question {turn} " + "x" * 80),
                    ChatMessage(role="assistant", content=f"answer {turn} " + "y" * 120),
                )
                done = await store.append_messages(sid, MessageCommit(messages=rows))
                await store.save_checkpoint(
                    sid,
                    Checkpoint(
                        checkpoint_id=f"c{turn}",
                        run_id="soak",
                        message_count=done.message_count,
                        state={"turn": turn, "notes": "z" * 100},
                        created_at=clock.now,
                    ),
                )
                # Each sample follows a whole sweep, so it measures the same state whenever
                # the background sweeper last ran (a sample between sweeps would count the
                # expired sessions not yet removed, more or fewer by the wall clock).
                if turn % soak.sweep_every == 0 or turn % every == 0:
                    while not (await store.sweep(limit=10_000)).wrapped:
                        pass
                if turn % every == 0:
                    live = len((await store.list_all_sessions(first=500)).sessions)
                    soak.measured.append((turn, await size(), live))
                    if progress:
                        print(f"turn {turn:>9}: size {soak.measured[-1][1]:>9}, {live} sessions")
    finally:
        await _cleanup(soak.backend, place)
    soak.seconds = time.perf_counter() - started
    return soak


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    p.add_argument("--backend", choices=["sqlite", "postgres", "redis", "memory"], default="sqlite")
    p.add_argument("--turns", type=int, default=1_000_000)
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--tolerance", type=float, default=0.25)
    p.add_argument("--json", type=Path, help="write the samples and the verdict here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run one soak; print the samples and the verdict; 1 if storage grew."""
    args = _args(sys.argv[1:] if argv is None else argv)
    soak = Soak(args.backend, args.turns, samples=args.samples, tolerance=args.tolerance)
    with tempfile.TemporaryDirectory(prefix="helix-soak-") as tmp:
        asyncio.run(run_soak(soak, Path(tmp), progress=True))
    flat, bound, peak = soak.verdict()
    rate = soak.turns / soak.seconds
    print(
        f"{soak.backend}: {soak.turns} turns in {soak.seconds:.0f} s ({rate:.0f} turns/s); "
        f"after warm-up peak {peak} <= bound {bound}: {'flat' if flat else 'GREW'}"
    )
    if args.json is not None:
        record = {"backend": soak.backend, "turns": soak.turns, "seconds": soak.seconds}
        record |= {"flat": flat, "bound": bound, "peak": peak, "samples": soak.measured}
        args.json.write_text(json.dumps(record, indent=1))
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
