"""What a commit costs when it waits for a replica (docs/scaling.md, "What each option costs").

* PostgreSQL: a primary and a synchronous standby of the bench's own (``start_pair``, with
  ``fsync`` on), one store per ``synchronous_commit``: ``local`` (the primary's flush only)
  and ``on`` (the standby's flush too), appends interleaved so noise hits both alike.
* Redis: a master and a replica (``RedisServers``), a store without ``wait_replicas`` and
  one with ``wait_replicas=1``, interleaved the same way.

Each row: append p50 / p99 without and with the wait, and the ratio of the p50s.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

import psycopg

from helix_agents.core import MessageCommit, SessionStateStore, open_store

from .config import Settings
from .stats import Latencies
from .systems.ours import turn_rows
from .workload import make_turn

__all__ = ["measure_replication"]

log = logging.getLogger("bench.replication")


async def _paired(urls: dict[str, str], ops: int) -> dict[str, Any]:
    """Appends of three rows on each store in turn; their latencies and the p50 ratio."""
    latencies = {name: Latencies() for name in urls}
    async with AsyncExitStack() as stack:
        stores: dict[str, SessionStateStore] = {
            name: await stack.enter_async_context(open_store(url)) for name, url in urls.items()
        }
        sessions = {name: (await s.create_session()).id for name, s in stores.items()}
        for i in range(ops):
            for name, store in stores.items():
                commit = MessageCommit(messages=turn_rows(make_turn(i)))
                begin = time.perf_counter()
                await store.append_messages(sessions[name], commit)
                if i >= ops // 10:  # the first tenth warms the connections up
                    latencies[name].add(time.perf_counter() - begin)
    summaries = {name: lat.summary() for name, lat in latencies.items()}
    without, with_wait = summaries.values()
    return {**summaries, "ratio_p50": with_wait["p50_ms"] / without["p50_ms"]}


def _migrate(url: str) -> None:
    from helix_agents.store_postgres import migrate

    async def run() -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await migrate(conn, "public")

    asyncio.run(run())


async def _postgres(ops: int) -> dict[str, Any] | None:
    from helix_agents.contract.servers import start_pair

    with start_pair(synchronous=True, fsync=True) as pair:
        if isinstance(pair, str):
            log.warning("no PostgreSQL primary and standby: %s", pair)
            return None
        await asyncio.to_thread(_migrate, pair.url("primary"))
        base = pair.url("primary")
        return await _paired(
            {
                "synchronous_commit=local": f"{base}?synchronous_commit=local",
                "synchronous_commit=on": f"{base}?synchronous_commit=on",
            },
            ops,
        )


async def _redis(ops: int, workdir: Path) -> dict[str, Any] | None:
    from helix_agents.contract.servers import RedisServers

    if shutil.which("redis-server") is None:
        log.warning("no redis-server to start a master and a replica with")
        return None
    root = workdir / "replication"
    root.mkdir(exist_ok=True)
    with ExitStack() as stack:
        servers = RedisServers(root)
        stack.callback(servers.stop)
        master = servers.start("--repl-diskless-sync-delay", "0")
        servers.start("--replicaof", "127.0.0.1", str(master))
        url = f"redis://127.0.0.1:{master}/0"
        return await _paired({"no wait": url, "wait_replicas=1": f"{url}?wait_replicas=1"}, ops)


async def measure_replication(settings: Settings, workdir: Path) -> dict[str, Any]:
    """Append latency with and without waiting for a replica, on PostgreSQL and Redis."""
    out: dict[str, Any] = {}
    log.info("replication: postgres")
    found = await _postgres(settings.replication_ops)
    if found is not None:
        out["postgres"] = found
    log.info("replication: redis")
    found = await _redis(settings.replication_ops, workdir)
    if found is not None:
        out["redis"] = found
    return out
