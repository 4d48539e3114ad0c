"""Cost growth on our stores: a turn on a long session, the first listing page of a busy user.

Sessions are seeded through the public API in large commits (1,002 rows per
``append_messages``), never by writing the stores' tables directly; then the
server is let settle (Postgres: ``ANALYZE``, what autovacuum does soon after). Each size
gets enough sessions that the measured appends grow none by more than 10%.
The sizes are measured interleaved, so noise hits every size alike.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any

from helix_agents.core import MessageCommit, SessionStateStore

from .config import Settings
from .stats import Latencies
from .systems.ours import HelixSubject, turn_rows
from .workload import make_turn

__all__ = ["measure_growth", "measure_listing"]

log = logging.getLogger("bench.growth")

_SEED_TURNS = 334  # turns per seeding commit: 1,002 rows
_LISTING_BUDGET = 20.0


async def _seed(store: SessionStateStore, sid: str, rows: int) -> None:
    await store.create_session(sid, user_id="growth")
    count = 0
    while count < rows:
        n = min(_SEED_TURNS, math.ceil((rows - count) / 3))
        batch = [m for i in range(n) for m in turn_rows(make_turn(count + i))]
        batch = batch[: rows - count]
        await store.append_messages(sid, MessageCommit(messages=batch, expect_message_count=count))
        count += len(batch)


async def measure_growth(subject: HelixSubject, settings: Settings) -> dict[str, Any]:
    """Append and read-last-N p50/p99 on sessions already holding each of the growth sizes."""
    store = subject.store
    plan: dict[int, list[str]] = {}
    counts: dict[str, int] = {}
    started = time.perf_counter()
    for size in settings.growth_sizes:
        k = max(1, min(settings.growth_ops, math.ceil(3 * settings.growth_ops / (0.1 * size))))
        plan[size] = [f"grow-{size}-{j}" for j in range(k)]
        for sid in plan[size]:
            await _seed(store, sid, size)
            counts[sid] = size
    seeded = sum(counts.values())
    log.info("%s: seeded %d rows in %.1fs", subject.name, seeded, time.perf_counter() - started)
    await subject.place.settle()
    storage = await subject.storage_bytes()
    append = {size: Latencies() for size in plan}
    read = {size: Latencies() for size in plan}
    clock = time.perf_counter
    for i in range(settings.growth_ops):
        for size, sids in plan.items():
            sid = sids[i % len(sids)]
            commit = MessageCommit(
                messages=turn_rows(make_turn(i)), expect_message_count=counts[sid]
            )
            t0 = clock()
            await store.append_messages(sid, commit)
            t1 = clock()
            got = await store.get_messages(sid, limit=settings.read_last)
            t2 = clock()
            counts[sid] += 3
            if len(got) != settings.read_last:
                raise AssertionError(f"{subject.name}: read {len(got)} rows of {sid}")
            append[size].add(t1 - t0)
            read[size].add(t2 - t1)
    return {
        "sessions_per_size": {str(size): len(sids) for size, sids in plan.items()},
        "append": {str(size): lat.summary() for size, lat in append.items()},
        "read": {str(size): lat.summary() for size, lat in read.items()},
        "seeded_rows": seeded,
        "storage_bytes": storage,
        "bytes_per_row": None if storage is None else storage / seeded,
    }


async def _create_many(store: SessionStateStore, user: str, n: int) -> None:
    width = 32  # concurrent creates: enough to fill a pool, few enough to stay polite
    for start in range(0, n, width):
        await asyncio.gather(
            *(
                store.create_session(f"{user}-{i:06d}", user_id=user)
                for i in range(start, min(n, start + width))
            )
        )


async def measure_listing(subject: HelixSubject, settings: Settings) -> dict[str, Any]:
    """First ``list_sessions`` page (20) for users holding each of the listing sizes.

    Measured twice: right after the sessions were created, and once the
    server has settled (:meth:`~bench.storage.Place.settle`); the second counts.
    """
    store = subject.store
    users = {size: f"lister{size}" for size in settings.listing_sizes}
    started = time.perf_counter()
    for size, user in users.items():
        await _create_many(store, user, size)
    log.info(
        "%s: created %d sessions in %.1fs",
        subject.name,
        sum(settings.listing_sizes),
        time.perf_counter() - started,
    )
    stale = await _first_pages(subject, users, max(1, settings.listing_ops // 4))
    await subject.place.settle()
    settled = await _first_pages(subject, users, settings.listing_ops)
    return {
        "list": {str(size): lat.summary() for size, lat in settled.items()},
        "list_before_settle": {str(size): lat.summary() for size, lat in stale.items()},
    }


async def _first_pages(
    subject: HelixSubject, users: dict[int, str], ops: int
) -> dict[int, Latencies]:
    """Up to ``ops`` first pages per user, interleaved; each page is checked.

    A store whose listing scans every session (the memory store) stops after
    :data:`_LISTING_BUDGET` seconds, with at least ten pages per user.
    """
    lat = {size: Latencies() for size in users}
    deadline = time.perf_counter() + _LISTING_BUDGET
    for i in range(ops):
        if i >= 10 and time.perf_counter() > deadline:
            break
        for size, user in users.items():
            t0 = time.perf_counter()
            page = await subject.store.list_sessions(user, first=20)
            lat[size].add(time.perf_counter() - t0)
            if len(page.sessions) != min(20, size):
                raise AssertionError(f"{subject.name}: listed {len(page.sessions)} of {user}")
    return lat
