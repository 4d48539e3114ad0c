"""Latency samples and their summaries: percentiles, medians and spread."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Latencies", "Spread", "percentile", "timed"]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation between order statistics."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def timed(op: Callable[[], Awaitable[Any]]) -> float:
    """Seconds ``op`` took."""
    start = time.perf_counter()
    await op()
    return time.perf_counter() - start


@dataclass(slots=True)
class Latencies:
    """Samples of one operation, in seconds."""

    samples: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        """Record one sample."""
        self.samples.append(seconds)

    def summary(self) -> dict[str, float]:
        """p50, p99 and mean, in milliseconds, and the sample count."""
        ms = [s * 1000 for s in self.samples]
        return {
            "p50_ms": percentile(ms, 50),
            "p99_ms": percentile(ms, 99),
            "mean_ms": statistics.fmean(ms) if ms else float("nan"),
            "n": float(len(ms)),
        }


@dataclass(frozen=True, slots=True)
class Spread:
    """The median of per-repetition values and their range."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        """Summarise one value per repetition."""
        if not values:
            nan = float("nan")
            return cls(nan, nan, nan)
        return cls(statistics.median(values), min(values), max(values))

    def as_dict(self) -> dict[str, float]:
        """``{"median", "low", "high"}``."""
        return {"median": self.median, "low": self.low, "high": self.high}
