"""The floor of each server, from the same client process and drivers our stores use.

* Redis: ``PING``; and for reference a 3-row ``RPUSH`` + ``HINCRBY`` in one
  ``MULTI/EXEC`` pipeline, and ``EVALSHA`` of a script that returns at once.
* Postgres (psycopg, one connection): ``SELECT 1``; and a pipelined one-round-trip
  insert transaction (``BEGIN``, a 3-row insert of ``jsonb`` rows, ``COMMIT``).
* SQLite (aiosqlite, WAL): a 3-row insert and commit in one hop to the
  connection's thread, with ``synchronous=NORMAL`` (our default) and ``FULL``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, cast

import aiosqlite
import psycopg
from psycopg import sql
from redis.asyncio import Redis

from .config import Servers, Settings
from .stats import Latencies, Spread, timed
from .throughput import start_sessions
from .workload import Subject, make_turn

__all__ = ["FLOOR_OF", "Floors", "measure_paired"]

FLOOR_OF: dict[str, tuple[str, float]] = {
    "helix redis": ("redis PING", 2.0),
    "helix postgres": ("postgres 1-RT insert tx", 2.0),
    "helix sqlite": ("sqlite 3-row insert+commit (NORMAL)", 1.5),
    "helix sqlite (FULL)": ("sqlite 3-row insert+commit (FULL)", 1.5),
}
"""Our store -> the server floor its append p50 is held to, and the bound on the ratio."""

_ROW = json.dumps({"role": "tool", "content": make_turn(0).tool_output})
_SCRIPT = "return 1"
_BLOCK = 10


def _insert3(db: sqlite3.Connection, n: int) -> None:
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        "INSERT INTO t (s, i, body) VALUES ('s', ?, ?)", [(n + k, _ROW) for k in range(3)]
    )
    db.execute("COMMIT")


class Floors:
    """Opens one client per server; :meth:`sample` adds samples of every floor, interleaved."""

    def __init__(self, servers: Servers, workdir: Path, schema: str) -> None:
        self.servers = servers
        self.workdir = workdir
        self.schema = schema
        self.samples: dict[str, Latencies] = {}
        self._ops: dict[str, Callable[[], Awaitable[Any]]] = {}
        self._stack = AsyncExitStack()
        self._n = 0

    async def open(self, servers: set[str]) -> None:
        """Connect to each server named in ``servers`` and prepare its tables."""
        if "redis" in servers:
            await self._open_redis()
        if "postgres" in servers:
            await self._open_postgres()
        if "sqlite" in servers:
            for sync in ("NORMAL", "FULL"):
                await self._open_sqlite(sync)
        self.reset()

    async def _open_redis(self) -> None:
        client = Redis.from_url(self.servers.redis)
        await self._stack.enter_async_context(client)
        sha = await client.script_load(_SCRIPT)
        rows_key, meta_key = f"{self.schema}:floor:rows", f"{self.schema}:floor:meta"

        async def multi() -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.rpush(rows_key, _ROW, _ROW, _ROW)
                pipe.hincrby(meta_key, "count", 3)
                await pipe.execute()
            self._n += 1
            if self._n % 1000 == 0:
                await client.delete(rows_key)

        async def cleanup() -> None:
            await client.delete(rows_key, meta_key)

        self._stack.push_async_callback(cleanup)
        self._ops["redis PING"] = client.ping
        self._ops["redis MULTI 3-row RPUSH"] = multi
        self._ops["redis EVALSHA no-op"] = lambda: client.evalsha(sha, 0)

    async def _open_postgres(self) -> None:
        conn = await psycopg.AsyncConnection.connect(self.servers.postgres, autocommit=True)
        await self._stack.enter_async_context(conn)
        table = sql.Identifier(self.schema, "floor_rows")
        await conn.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
        )
        await conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (s text, i bigint, body jsonb, PRIMARY KEY (s, i))"
            ).format(table)
        )
        insert = sql.SQL(
            "INSERT INTO {} (s, i, body) VALUES ('s', %s, %s), ('s', %s, %s), ('s', %s, %s)"
        ).format(table)

        async def select1() -> None:
            cur = await conn.execute("SELECT 1")
            await cur.fetchone()

        async def insert_tx() -> None:
            n = self._n = self._n + 3
            async with conn.pipeline():
                await conn.execute("BEGIN")
                await conn.execute(insert, (n, _ROW, n + 1, _ROW, n + 2, _ROW))
                await conn.execute("COMMIT")

        async def drop() -> None:
            await conn.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema))
            )

        self._stack.push_async_callback(drop)
        self._ops["postgres SELECT 1"] = select1
        self._ops["postgres 1-RT insert tx"] = insert_tx

    async def _open_sqlite(self, sync: str) -> None:
        path = self.workdir / f"{self.schema}_floor_{sync.lower()}.db"
        path.unlink(missing_ok=True)
        conn = await self._stack.enter_async_context(aiosqlite.connect(path, isolation_level=None))
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute(f"PRAGMA synchronous={sync}")
        await conn.execute("CREATE TABLE t (s TEXT, i INTEGER, body TEXT, PRIMARY KEY (s, i))")
        # The store's own path: one call on the connection's thread per transaction.
        run = cast(Callable[..., Awaitable[Any]], conn._execute)

        async def insert3() -> None:
            self._n += 3
            await run(_insert3, conn._conn, self._n)

        self._ops[f"sqlite 3-row insert+commit ({sync})"] = insert3

    async def sample(self, n: int) -> None:
        """``n`` samples of each floor, in blocks of ten, round-robin over the floors.

        Each block starts with an untimed call, so no floor pays for the
        switch from another server (a woken thread, a cold socket).
        """
        for start in range(0, n, _BLOCK):
            for name, op in self._ops.items():
                await op()
                for _ in range(min(_BLOCK, n - start)):
                    self.samples[name].add(await timed(op))

    def op(self, name: str) -> Callable[[], Awaitable[Any]] | None:
        """The floor called ``name``, if its server is open."""
        return self._ops.get(name)

    def reset(self) -> None:
        """Forget the samples taken so far (after a warm-up)."""
        self.samples = {name: Latencies() for name in self._ops}

    def summary(self) -> dict[str, dict[str, float]]:
        """p50/p99 per floor."""
        return {name: lat.summary() for name, lat in self.samples.items()}

    async def close(self) -> None:
        """Drop the floor tables and disconnect."""
        await self._stack.aclose()


async def measure_paired(
    subjects: list[Subject], floors: Floors, settings: Settings
) -> dict[str, dict[str, Any]]:
    """Each of our stores' append against its floor (:data:`FLOOR_OF`), sampled in pairs.

    A round is the turn's append, its 20-row read, one call of the floor and the
    read again, so each timed call follows a read and both see the same moments
    of the machine (a thread woken on a busy or an idle core, a warm or a cold
    cache), which the floors sampled in blocks between repetitions do not. The
    ratio is taken per repetition (the subjects rotating) and its median reported.
    """
    paired = [
        (s, name, op)
        for s in subjects
        if s.name in FLOOR_OF and (op := floors.op(name := FLOOR_OF[s.name][0])) is not None
    ]
    samples: dict[str, tuple[Latencies, Latencies, list[float]]] = {
        s.name: (Latencies(), Latencies(), []) for s, _, _ in paired
    }
    clock = time.perf_counter
    for rep in range(settings.repetitions):
        shift = rep % len(paired) if paired else 0
        for subject, _, op in paired[shift:] + paired[:shift]:
            sessions = [f"p{rep}-s{i:02d}" for i in range(settings.sessions)]
            await start_sessions(subject, sessions)
            counts = dict.fromkeys(sessions, 0)
            ours, floor = Latencies(), Latencies()
            for i in range(settings.paired_turns):
                sid = sessions[i % len(sessions)]
                turn = make_turn(50_000_000 + rep * 1_000_000 + i)
                start = clock()
                await subject.append(sid, turn, counts[sid])
                ours.add(clock() - start)
                counts[sid] += 3
                await subject.read(sid, settings.read_last)
                floor.add(await timed(op))
                # So the next append, like the floor, comes after a read: at FULL an fsync
                # right after another one waits for it.
                await subject.read(sid, settings.read_last)
            pooled_ours, pooled_floor, ratios = samples[subject.name]
            pooled_ours.samples += ours.samples
            pooled_floor.samples += floor.samples
            ratios.append(ours.summary()["p50_ms"] / floor.summary()["p50_ms"])
    return {
        s.name: {
            "floor": name,
            "append": samples[s.name][0].summary(),
            "floor_latency": samples[s.name][1].summary(),
            "ratio": Spread.of(samples[s.name][2]).as_dict(),
            "ratio_per_rep": samples[s.name][2],
        }
        for s, name, _ in paired
    }
