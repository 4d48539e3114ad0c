"""LangGraph long-term memory: put, get and search p50 of HelixMemoryStore on each backend,
beside LangGraph's own stores (docs/integrations/langgraph.md, "Measured").

``python -m bench.memory_store`` prints the table; ``--publish`` also writes it between
the ``bench:memory-store`` markers of the docs page. Each subject gets ``ITEMS`` items of
about 100 bytes in one namespace, then the three calls are timed in turns, ``--calls`` of
each after a warm-up: a put overwrites an existing key, a get reads one, a search is
``asearch(namespace, limit=10)``. LangGraph's ``AsyncSqliteStore`` and
``AsyncPostgresStore`` are measured when the bench group is installed. Data lives in a
temporary directory, a Postgres database and schema and a Redis key prefix named
``helixbench_mem*``, all dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from psycopg import sql

from helix_agents.core import open_store
from helix_agents.langgraph import HelixMemoryStore

from .config import ROOT, Servers
from .stats import percentile, timed

ITEMS = 200
NAMESPACE = ("bench", "user-1", "memories")
PAGE = ROOT / "docs" / "integrations" / "langgraph.md"
BEGIN, END = "<!-- bench:memory-store -->", "<!-- /bench:memory-store -->"
Opener = Callable[[], AbstractAsyncContextManager[BaseStore]]


def _value(i: int) -> dict[str, Any]:
    return {"text": f"memory number {i} about tea and travel", "n": i, "tags": ["a", "b"]}


async def measure(store: BaseStore, calls: int) -> dict[str, float]:
    """p50 in ms of put, get and search on ``store``, seeded with ``ITEMS`` items."""
    for i in range(ITEMS):
        await store.aput(NAMESPACE, f"k{i}", _value(i))
    times: dict[str, list[float]] = {"put": [], "get": [], "search": []}
    rng = random.Random(7)
    for turn in range(calls + calls // 10):
        key, value = f"k{rng.randrange(ITEMS)}", _value(turn)
        put = await timed(partial(store.aput, NAMESPACE, key, value))
        get = await timed(partial(store.aget, NAMESPACE, key))
        search = await timed(partial(store.asearch, NAMESPACE, limit=10))
        if turn >= calls // 10:  # the first tenth warms up
            for name, took in (("put", put), ("get", get), ("search", search)):
                times[name].append(took * 1000)
    return {name: percentile(values, 50) for name, values in times.items()}


@asynccontextmanager
async def _helix(url: str, **options: Any) -> AsyncIterator[BaseStore]:
    async with open_store(url, **options) as store:
        yield HelixMemoryStore(store)


@asynccontextmanager
async def _inmemory() -> AsyncIterator[BaseStore]:
    yield InMemoryStore()


def subjects(servers: Servers, workdir: Path, run: str) -> dict[str, Opener]:
    """Every store to measure, by name: ours first, then LangGraph's own when installed."""
    found: dict[str, Opener] = {
        "HelixMemoryStore on memory": lambda: _helix("memory://"),
        "HelixMemoryStore on sqlite": lambda: _helix(f"sqlite:///{workdir / 'helix.db'}"),
        "HelixMemoryStore on postgres": lambda: _helix(
            servers.postgres, namespace=f"helixbench_mem_{run}", auto_migrate=True
        ),
        "HelixMemoryStore on redis": lambda: _helix(
            servers.redis, namespace=f"helixbench_mem_{run}", key_prefix="helixbench_mem"
        ),
        "LangGraph InMemoryStore": _inmemory,
    }
    with contextlib.suppress(ImportError):
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        @asynccontextmanager
        async def lg_sqlite() -> AsyncIterator[BaseStore]:
            async with AsyncSqliteStore.from_conn_string(str(workdir / "lg.db")) as store:
                await store.setup()
                yield store

        found["LangGraph AsyncSqliteStore"] = lg_sqlite
    with contextlib.suppress(ImportError):
        from langgraph.store.postgres.aio import AsyncPostgresStore

        @asynccontextmanager
        async def lg_postgres() -> AsyncIterator[BaseStore]:
            url = _database_url(servers.postgres, f"helixbench_mem_{run}")
            async with AsyncPostgresStore.from_conn_string(url) as store:
                await store.setup()
                yield store

        found["LangGraph AsyncPostgresStore"] = lg_postgres
    return found


def _database_url(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def _drop(servers: Servers, run: str) -> None:
    with psycopg.connect(servers.postgres, autocommit=True) as conn:
        name = sql.Identifier(f"helixbench_mem_{run}")
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(name))
    with redis.Redis.from_url(servers.redis) as client:
        for key in client.scan_iter(match="helixbench_mem:*", count=1000):
            client.delete(key)


def render(results: dict[str, dict[str, float]], calls: int) -> str:
    """The Markdown table of ``results``."""
    lines = [
        f"| store ({calls} calls each) | put p50 (ms) | get p50 (ms) | search p50 (ms) |",
        "| --- | --- | --- | --- |",
    ]
    for name, p50 in results.items():
        lines.append(f"| {name} | {p50['put']:.3f} | {p50['get']:.3f} | {p50['search']:.3f} |")
    return "\n".join(lines)


def publish(table: str) -> None:
    """Write ``table`` between the markers of the docs page."""
    text = PAGE.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    PAGE.write_text(f"{text[:start]}\n{table}\n{text[end:]}")


async def main(calls: int, only: str | None) -> dict[str, dict[str, float]]:
    """Measure every subject (or those whose name holds ``only``)."""
    servers, run = Servers.from_env(), uuid.uuid4().hex[:8]
    with psycopg.connect(servers.postgres, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(f"helixbench_mem_{run}")))
    results: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="helixbench_mem") as tmp:
            for name, opener in subjects(servers, Path(tmp), run).items():
                if only and only not in name:
                    continue
                async with opener() as store:
                    results[name] = await measure(store, calls)
                print(f"{name}: {results[name]}", flush=True)
    finally:
        _drop(servers, run)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=200, help="timed calls of each kind")
    parser.add_argument("--only", help="measure only the subjects whose name holds this")
    parser.add_argument("--publish", action="store_true", help="write the table into the docs")
    args = parser.parse_args()
    table = render(asyncio.run(main(args.calls, args.only)), args.calls)
    print(table)
    if args.publish:
        publish(table)
