"""``python -m bench.tracing_overhead``: what tracing costs per store call (a micro-benchmark).

Times ``get_message_count`` on a memory store, the cheapest call there is, so the
wrapper's cost is not hidden behind I/O: the store as ``open_store`` returns it
without ``tracing`` (the disabled path: the store itself, no wrapper), traced with
only the OpenTelemetry API (no SDK installed or configured: no-op spans), and
traced with the SDK recording every span. The numbers go in docs/observability.md.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from helix_agents.core import SessionStateStore, open_store
from helix_agents.core.tracing import traced
from helix_agents.store_memory import MemoryStateStore

CALLS = 20_000
ROUNDS = 7


async def _per_call(store: SessionStateStore) -> float:
    async with store:
        await store.create_session("s")
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(CALLS):
                await store.get_message_count("s")
            times.append((time.perf_counter() - start) / CALLS)
    return statistics.median(times) * 1e6


async def main() -> None:
    """Print the median microseconds per call of each configuration."""
    configurations = [
        ("open_store(url), tracing off", open_store("memory://")),
        ("traced, API only (no-op spans)", traced(MemoryStateStore())),
        (
            "traced, SDK recording spans",
            traced(
                MemoryStateStore(), tracer_provider=TracerProvider(), meter_provider=MeterProvider()
            ),
        ),
    ]
    for name, store in configurations:
        print(f"{name:32} {await _per_call(store):6.2f} µs/call")


if __name__ == "__main__":
    asyncio.run(main())
