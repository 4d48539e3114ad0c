"""Scaling out (docs/scaling.md): what one 2-core machine can show of it.

* Redis, standalone and a three-master cluster side by side: 1 against 16
  tasks in one process, and 1 against 4 client processes; and where 10,000
  sessions the store created land among the masters' slots.
* Postgres: 64 tasks on a pool of 16 connections, append p50 against p99.
* SQLite: 1 against 4 OS processes appending to one file, and every error
  they met (busy errors above all: there must be none).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from helix_agents.core import MessageCommit, SessionStateStore, open_store

from .config import Servers, Settings
from .stats import Latencies
from .systems import NAMESPACE, helix_subject
from .systems.ours import turn_rows
from .throughput import TurnResults, run_turns, start_sessions
from .workload import make_turn

__all__ = ["measure_scaling"]

log = logging.getLogger("bench.scaling")

_PROCESSES = 4
_SLOT_SESSIONS = 10_000


def _cluster_url(stack: ExitStack, workdir: Path) -> str | None:
    """``$HELIX_REDIS_CLUSTER_URL``, else a private cluster of local ``redis-server``s."""
    from helix_agents.contract.servers import RedisServers, find_redis_cluster

    root = workdir / "cluster"
    root.mkdir(exist_ok=True)
    servers = RedisServers(root)
    stack.callback(servers.stop)
    found = find_redis_cluster(stack, servers)
    if found.url is None:
        log.warning("no Redis Cluster: %s", found.reason)
    return found.url


async def _lane(store: SessionStateStore, sessions: list[str], turns: int) -> list[str]:
    """``turns`` turns round-robin over ``sessions``; the errors met (the run goes on)."""
    counts = dict.fromkeys(sessions, 0)
    errors: list[str] = []
    for i in range(turns):
        sid = sessions[i % len(sessions)]
        commit = MessageCommit(messages=turn_rows(make_turn(i)), expect_message_count=counts[sid])
        try:
            await store.append_messages(sid, commit)
            await store.get_messages(sid, limit=20)
        except Exception as exc:  # counted and reported: the target is none
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        counts[sid] += 3
    return errors


async def _tasks_round(url: str, options: dict[str, Any], tasks: int, turns: int) -> float:
    """Turns per second of ``tasks`` tasks on one store, each on sessions of its own."""
    async with open_store(url, **options) as store:
        lanes = [
            [(await store.create_session(user_id="bench-tasks")).id for _ in range(4)]
            for _ in range(tasks)
        ]
        share = turns // tasks
        begin = time.perf_counter()
        errors = await asyncio.gather(*(_lane(store, lane, share) for lane in lanes))
        tps = share * tasks / (time.perf_counter() - begin)
        for lane in lanes:
            for sid in lane:
                await store.delete_session(sid)
    met = [e for lane_errors in errors for e in lane_errors]
    if met:
        raise RuntimeError(f"{tasks} tasks on {url}: {len(met)} errors, first {met[0]}")
    return tps


def _process_main(url: str, options: dict[str, Any], turns: int, start: Any, out: Any) -> None:
    """One client process: open a store, wait for the others, run ``turns``, report."""

    async def main() -> tuple[float, int, list[str]]:
        async with open_store(url, **options) as store:
            sessions = [(await store.create_session(user_id="bench-proc")).id for _ in range(4)]
            start.wait()
            begin = time.perf_counter()
            errors = await _lane(store, sessions, turns)
            elapsed = time.perf_counter() - begin
            for sid in sessions:
                await store.delete_session(sid)
        return elapsed, turns - len(errors), errors

    out.put(asyncio.run(main()))


def _processes(url: str, options: dict[str, Any], processes: int, turns: int) -> dict[str, Any]:
    """Turns per second of ``processes`` client processes together, and their errors."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(processes), ctx.Queue()
    share = turns // processes
    procs = [
        ctx.Process(target=_process_main, args=(url, options, share, start, out))
        for _ in range(processes)
    ]
    for p in procs:
        p.start()
    reports = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    elapsed = max(r[0] for r in reports)
    errors = [e for r in reports for e in r[2]]
    return {
        "processes": processes,
        "turns_per_s": sum(r[1] for r in reports) / elapsed,
        "errors": len(errors),
        "error_kinds": dict(Counter(e.split(":")[0] for e in errors)),
    }


async def _slot_spread(url: str) -> dict[str, Any]:
    """Where sessions the store creates land: sessions per master, by the cluster's slot map."""
    from redis.asyncio import RedisCluster

    from helix_agents.store_redis import RedisStateStore

    per_node: Counter[str] = Counter()
    async with RedisStateStore(url, namespace=f"{NAMESPACE}_slots") as store:
        client = store.client  # the store's own cluster client: its slot map
        assert isinstance(client, RedisCluster)
        keys = store.options.keys
        ids = []
        for _ in range(_SLOT_SESSIONS):
            ids.append((await store.create_session(user_id="bench-slots")).id)
        for sid in ids:
            node = client.get_node_from_key(keys.meta(sid))
            per_node["?" if node is None else node.name] += 1
        for sid in ids:
            await store.delete_session(sid)
    mean = _SLOT_SESSIONS / len(per_node)
    return {
        "sessions": _SLOT_SESSIONS,
        "per_master": dict(per_node),
        "max_deviation": max(abs(n / mean - 1) for n in per_node.values()),
    }


async def _redis(settings: Settings, servers: Servers, workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with ExitStack() as stack:
        cluster = _cluster_url(stack, workdir)
        targets = {"standalone": servers.redis, **({"cluster": cluster} if cluster else {})}
        for name, url in targets.items():
            options = {"namespace": f"{NAMESPACE}_scale_{name}"}
            turns = settings.concurrency_turns
            one = await _tasks_round(url, options, 1, turns)
            many = await _tasks_round(url, options, settings.concurrency_tasks, turns)
            single = await asyncio.to_thread(_processes, url, options, 1, turns)
            multi = await asyncio.to_thread(_processes, url, options, _PROCESSES, turns)
            out[name] = {
                "tasks": {"1": one, str(settings.concurrency_tasks): many},
                "processes": {"1": single, str(_PROCESSES): multi},
            }
            log.info("scaling redis %s: %s", name, out[name])
        if cluster:
            out["cluster"]["slots"] = await _slot_spread(cluster)
    return out


async def _postgres_wide(settings: Settings, servers: Servers, workdir: Path) -> dict[str, Any]:
    """64 tasks on a pool of 16: append p50 and p99."""
    tasks, pool = 64, 16
    subject = helix_subject("postgres", servers, workdir, "_wide", max_size=pool)
    await subject.open()
    try:
        results = TurnResults(subject)
        lanes = [[f"w{t}-{i}" for i in range(2)] for t in range(tasks)]
        for lane in lanes:
            await start_sessions(subject, lane)
        per_task = max(10, settings.concurrency_turns // tasks)
        begin = time.perf_counter()
        await asyncio.gather(
            *(
                run_turns(subject, lanes[t], [make_turn(i) for i in range(per_task)], 20, results)
                for t in range(tasks)
            )
        )
        tps = tasks * per_task / (time.perf_counter() - begin)
    finally:
        await subject.close()
    append: Latencies = results.append
    return {"tasks": tasks, "pool": pool, "turns_per_s": tps, "append": append.summary()}


async def measure_scaling(settings: Settings, servers: Servers, workdir: Path) -> dict[str, Any]:
    """Every scaling measurement this machine can make."""
    out: dict[str, Any] = {"redis": await _redis(settings, servers, workdir)}
    out["postgres"] = await _postgres_wide(settings, servers, workdir)
    path = workdir / f"{NAMESPACE}_scale.db"
    url = f"sqlite:///{path}"
    turns = settings.concurrency_turns
    out["sqlite"] = {
        "1": await asyncio.to_thread(_processes, url, {}, 1, turns),
        str(_PROCESSES): await asyncio.to_thread(_processes, url, {}, _PROCESSES, turns),
    }
    return out
