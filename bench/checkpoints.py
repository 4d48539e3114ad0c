"""LangGraph reads on a long thread: the latest checkpoint and a page of ten, at 10 and 10,000.

Each saver gets two threads, seeded through its own ``aput`` and ``aput_writes``
(a chain of checkpoints, each with one pending write, as a graph leaves them):
one of ``checkpoint_sizes[0]`` checkpoints and one of ``checkpoint_sizes[-1]``.
Then ``aget_tuple`` of the latest checkpoint and ``alist(limit=10)`` are timed
on both, interleaved, so noise hits both sizes alike, once the server has
settled after the load (:meth:`~bench.storage.Place.settle`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6

from .config import Settings
from .stats import Latencies
from .systems.langgraph import GraphSubject

__all__ = ["measure_checkpoints"]

log = logging.getLogger("bench.checkpoints")


def _config(thread: str, parent: str | None = None) -> RunnableConfig:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if parent is not None:
        conf["checkpoint_id"] = parent
    return {"configurable": conf}


async def _seed(saver: BaseCheckpointSaver[Any], thread: str, size: int) -> None:
    parent: str | None = None
    for step in range(size):
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=-1))
        checkpoint["channel_values"] = {"messages": [f"turn {step}"], "step": step}
        checkpoint["channel_versions"] = {"messages": step + 1, "step": step + 1}
        metadata: Any = {"source": "loop", "step": step}
        versions = checkpoint["channel_versions"]
        stored = await saver.aput(_config(thread, parent), checkpoint, metadata, versions)
        await saver.aput_writes(stored, [("messages", f"write {step}")], f"task-{step}")
        parent = checkpoint["id"]


async def measure_checkpoints(subject: GraphSubject, settings: Settings) -> dict[str, Any]:
    """``aget_tuple`` (latest) and ``alist(limit=10)`` p50/p99 on threads of each size."""
    saver = subject.saver
    if saver is None:
        raise AssertionError(f"{subject.name} is not open")
    started = time.perf_counter()
    threads = {size: f"ckpt-{size}" for size in settings.checkpoint_sizes}
    for size, thread in threads.items():
        await _seed(saver, thread, size)
    log.info("%s: seeded in %.1fs", subject.name, time.perf_counter() - started)
    await subject.place.settle()
    latest = {size: Latencies() for size in threads}
    page = {size: Latencies() for size in threads}
    clock = time.perf_counter
    for _ in range(settings.checkpoint_ops):
        for size, thread in threads.items():
            t0 = clock()
            tup = await saver.aget_tuple(_config(thread))
            t1 = clock()
            listed = [t async for t in saver.alist(_config(thread), limit=10)]
            t2 = clock()
            if tup is None or tup.metadata["step"] != size - 1 or len(listed) != min(10, size):
                raise AssertionError(f"{subject.name}: wrong reads on {thread}")
            latest[size].add(t1 - t0)
            page[size].add(t2 - t1)
    return {
        "family": subject.family,
        "latest": {str(size): lat.summary() for size, lat in latest.items()},
        "list10": {str(size): lat.summary() for size, lat in page.items()},
    }
