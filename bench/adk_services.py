"""ADK artifacts and memory: ``HelixArtifactService`` / ``HelixMemoryService`` beside ADK's own.

``python -m bench.adk_services [--quick]`` prints p50 and p99 (ms) of ``save_artifact``
and ``load_artifact`` (a 4 KiB binary part, ``files`` names, the latest version loaded)
and of ``search_memory`` (two-word queries over ``sessions`` archived sessions of 20
events), for ADK's ``InMemoryArtifactService``, ``FileArtifactService`` and
``InMemoryMemoryService`` and for ours on memory, SQLite, PostgreSQL and Redis (the
servers of ``bench.config.Servers``). The services run one after another, each on fresh
data under a name of its own (bench.systems), removed after it.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from google.adk.artifacts import BaseArtifactService, FileArtifactService, InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from google.adk.sessions import Session
from google.genai import types

from helix_agents.adk import HelixArtifactService, HelixMemoryService

from .config import Servers
from .stats import Latencies
from .systems import helix_subject

__all__ = ["main", "measure"]

APP, USER = "bench", "user-1"
SERVERS = ("memory", "sqlite", "postgres", "redis")
WORDS = (
    "alpine",
    "river",
    "lantern",
    "copper",
    "meadow",
    "harbor",
    "violet",
    "ember",
    "quartz",
    "willow",
)


@asynccontextmanager
async def _services(
    name: str, servers: Servers, workdir: Path
) -> AsyncIterator[tuple[BaseArtifactService | None, BaseMemoryService | None]]:
    if name == "adk in-memory":
        yield InMemoryArtifactService(), InMemoryMemoryService()
        return
    if name == "adk file":
        yield FileArtifactService(workdir / "adk_artifacts"), None
        return
    subject = helix_subject(name.removeprefix("helix "), servers, workdir, "_adk_services")
    await subject.open()
    try:
        yield HelixArtifactService(subject.store), HelixMemoryService(subject.store)
    finally:
        await subject.close()


async def _artifacts(service: BaseArtifactService, saves: int, files: int) -> dict[str, Latencies]:
    lat = {"save_artifact": Latencies(), "load_artifact": Latencies()}
    data = bytes(range(256)) * 16
    clock = time.perf_counter
    for n in range(saves):
        part = types.Part(inline_data=types.Blob(data=data, mime_type="application/octet-stream"))
        names: dict[str, Any] = {
            "app_name": APP,
            "user_id": USER,
            "session_id": "s1",
            "filename": f"f{n % files}",
        }
        t0 = clock()
        await service.save_artifact(**names, artifact=part)
        lat["save_artifact"].add(clock() - t0)
        t0 = clock()
        loaded = await service.load_artifact(**names)
        lat["load_artifact"].add(clock() - t0)
        if loaded is None or loaded.inline_data is None or loaded.inline_data.data != data:
            raise AssertionError(f"wrong artifact back from {type(service).__name__}")
    return lat


async def _memory(service: BaseMemoryService, sessions: int, searches: int) -> Latencies:
    for s in range(sessions):
        events = [
            Event(
                author="user",
                content=types.Content(
                    role="user",
                    parts=[types.Part(text=f"{WORDS[(s + e) % 10]} note {s}-{e} " * 3)],
                ),
            )
            for e in range(20)
        ]
        await service.add_session_to_memory(
            Session(id=f"s{s}", app_name=APP, user_id=USER, events=events)
        )
    lat = Latencies()
    for n in range(searches):
        query = f"{WORDS[n % 10]} {WORDS[(n + 3) % 10]}"
        t0 = time.perf_counter()
        found = await service.search_memory(app_name=APP, user_id=USER, query=query)
        lat.add(time.perf_counter() - t0)
        if not found.memories:
            raise AssertionError(f"{type(service).__name__} found nothing for {query!r}")
    return lat


async def measure(quick: bool) -> dict[str, dict[str, dict[str, float]]]:
    """Per service: p50/p99 of each operation it has."""
    saves, files, sessions, searches = (50, 5, 10, 30) if quick else (400, 20, 50, 200)
    servers = Servers.from_env()
    out: dict[str, dict[str, dict[str, float]]] = {}
    names = ["adk in-memory", "adk file", *(f"helix {s}" for s in SERVERS)]
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            async with _services(name, servers, Path(tmp)) as (artifacts, memory):
                lat = {} if artifacts is None else await _artifacts(artifacts, saves, files)
                if memory is not None:
                    lat["search_memory"] = await _memory(memory, sessions, searches)
                out[name] = {op: s.summary() for op, s in lat.items()}
    return out


def main() -> None:
    """Run and print one markdown table of p50 / p99 in milliseconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer saves and searches")
    results = asyncio.run(measure(parser.parse_args().quick))
    ops = ("save_artifact", "load_artifact", "search_memory")
    print("| service | " + " | ".join(f"{op} p50 / p99 (ms)" for op in ops) + " |")
    print("| --- |" + " --- |" * len(ops))
    for name, by_op in results.items():
        cells = [
            f"{by_op[op]['p50_ms']:.3f} / {by_op[op]['p99_ms']:.3f}" if op in by_op else "—"
            for op in ops
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
