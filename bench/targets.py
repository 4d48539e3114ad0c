"""The issue's targets, checked against one run's results (ratios measured in that run)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .floors import FLOOR_OF
from .stats import Spread

__all__ = ["PEERS", "Target", "evaluate", "paired_ratios"]

PEERS: dict[str, list[tuple[str, float]]] = {
    "helix sqlite": [("SDK SQLiteSession", 1.5), ("LangGraph AsyncSqliteSaver", 0.0)],
    # Like-for-like durability: SQLiteSession runs with SQLite's default synchronous=FULL.
    "helix sqlite (FULL)": [("SDK SQLiteSession", 1.5)],
    "helix redis": [("SDK RedisSession", 2.0)],
    "helix postgres": [("SDK SQLAlchemySession", 3.5), ("LangGraph AsyncPostgresSaver", 4.0)],
    "LangGraph on helix sqlite": [("LangGraph AsyncSqliteSaver", 0.0)],
    "LangGraph on helix postgres": [("LangGraph AsyncPostgresSaver", 0.0)],
    "HelixSession sqlite": [("SDK SQLiteSession", 0.0)],
    "HelixSession redis": [("SDK RedisSession", 0.0)],
    "HelixSession postgres": [("SDK SQLAlchemySession", 0.0)],
}
"""Our store -> the alternatives it is compared with, and the target ratio (0: none).

The ``HelixSession`` pairs also name the ``runner`` phase's subjects (the SDK's runner turn).
"""


@dataclass(frozen=True, slots=True)
class Target:
    """One target: ``value`` (median, with ``low``..``high`` over repetitions) against ``bound``."""

    text: str
    value: float
    low: float
    high: float
    bound: float
    at_least: bool

    @property
    def met(self) -> bool:
        """Whether the median meets the bound."""
        return self.value >= self.bound if self.at_least else self.value <= self.bound

    def as_dict(self) -> dict[str, Any]:
        """The JSON form, with ``met``."""
        return {**asdict(self), "met": self.met}


def paired_ratios(ours: list[float], theirs: list[float]) -> Spread:
    """Per-repetition ratios of two subjects measured in the same repetitions."""
    return Spread.of([a / b for a, b in zip(ours, theirs, strict=False) if b])


def _by_name(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in results.get("turns", []) if not t.get("error")}


def _ratio_targets(results: dict[str, Any]) -> list[Target]:
    turns = _by_name(results)
    out = []
    for ours, peers in PEERS.items():
        for peer, bound in peers:
            if bound and ours in turns and peer in turns:
                r = paired_ratios(
                    turns[ours]["turns_per_s_per_rep"], turns[peer]["turns_per_s_per_rep"]
                )
                out.append(Target(f"{ours} turns/s / {peer}", r.median, r.low, r.high, bound, True))
    return out


def _floor_targets(results: dict[str, Any]) -> list[Target]:
    paired = results.get("paired_floors")
    if paired:
        return [
            Target(
                f"{ours} append p50 / {p['floor']} p50 (paired)",
                p["ratio"]["median"],
                p["ratio"]["low"],
                p["ratio"]["high"],
                FLOOR_OF[ours][1],
                False,
            )
            for ours, p in paired.items()
        ]
    # Results from before the paired measurement: the turns' append against the floors' blocks.
    turns, floors = _by_name(results), results.get("floors", {})
    out = []
    for ours, (floor, bound) in FLOOR_OF.items():
        if ours in turns and floor in floors:
            v = turns[ours]["append"]["p50_ms"] / floors[floor]["p50_ms"]
            out.append(Target(f"{ours} append p50 / {floor} p50", v, v, v, bound, False))
    return out


def _growth_targets(results: dict[str, Any]) -> list[Target]:
    out = []
    for server, g in results.get("growth", {}).items():
        sizes = sorted(int(s) for s in g["append"])
        small, big = str(sizes[0]), str(sizes[-1])
        for op in ("append", "read"):
            v = g[op][big]["p50_ms"] / g[op][small]["p50_ms"]
            out.append(
                Target(f"helix {server} {op} p50 at {big} / at {small} rows", v, v, v, 1.2, False)
            )
    for server, listing in results.get("listing", {}).items():
        sizes = sorted(int(s) for s in listing["list"])
        small, big = str(sizes[0]), str(sizes[-1])
        v = listing["list"][big]["p50_ms"] / listing["list"][small]["p50_ms"]
        text = f"helix {server} first page p50 at {big} / at {small} sessions"
        out.append(Target(text, v, v, v, 2.0, False))
        tail = results.get("growth", {}).get(server, {}).get("read", {})
        if tail:
            smallest = str(min(int(s) for s in tail))
            v = listing["list"][small]["p50_ms"] / tail[smallest]["p50_ms"]
            text = f"helix {server} first page p50 / its tail read p50 (at {smallest} rows)"
            out.append(Target(text, v, v, v, 2.0, False))
    return out


def _checkpoint_targets(results: dict[str, Any]) -> list[Target]:
    out = []
    for name, c in results.get("checkpoints", {}).items():
        if c["family"] != "helix":
            continue
        for op, key in (("latest checkpoint", "latest"), ("list(limit=10)", "list10")):
            sizes = sorted(int(s) for s in c[key])
            small, big = str(sizes[0]), str(sizes[-1])
            v = c[key][big]["p50_ms"] / c[key][small]["p50_ms"]
            text = f"{name} {op} p50 at {big} / at {small} checkpoints"
            out.append(Target(text, v, v, v, 1.5, False))
    return out


def _concurrency_targets(results: dict[str, Any]) -> list[Target]:
    c = results.get("concurrency", {}).get("postgres")
    if c is None:
        return []
    r = c["ratio"]
    text = f"helix postgres turns/s with {c['tasks']} tasks / 1 task"
    return [Target(text, r["median"], r["low"], r["high"], 2.0, True)]


GREP_1MB_MS = 100.0
"""A grep through a stored 1 MB output, p50, on every backend."""
HISTORY_SEARCH_MS = 400.0
"""A history search that reads all 100,000 rows of a session, p50, on every backend."""


INSPECTOR_PAGE_MS = 1_000.0
"""Opening the inspector's page of that 100,000-row session, p50 (docs/inspector.md INS-14)."""


INSPECTOR_FULL_PAGE_MS = 1_000.0
"""Opening the inspector's page of a 10,000-row session with a 1 MB output, which reads
every record of it, p50 (docs/inspector.md INS-18)."""


def _context_targets(results: dict[str, Any]) -> list[Target]:
    out = []
    for server, c in results.get("context", {}).items():
        v = c["grep_1mb"]["p50_ms"]
        out.append(
            Target(f"helix {server} grep of a 1 MB output, p50 ms", v, v, v, GREP_1MB_MS, False)
        )
        v = c["history_search"]["p50_ms"]
        text = f"helix {server} history search over {c['history_rows']:,} rows, p50 ms"
        out.append(Target(text, v, v, v, HISTORY_SEARCH_MS, False))
        if "inspector_page" in c:
            v = c["inspector_page"]["p50_ms"]
            text = f"helix {server} inspector page of {c['history_rows']:,} rows, p50 ms"
            out.append(Target(text, v, v, v, INSPECTOR_PAGE_MS, False))
        if "inspector_full_page" in c:
            v = c["inspector_full_page"]["p50_ms"]
            rows = c["inspector_full_rows"]
            text = f"helix {server} inspector page of {rows:,} rows with every record, p50 ms"
            out.append(Target(text, v, v, v, INSPECTOR_FULL_PAGE_MS, False))
    return out


def _scaling_targets(results: dict[str, Any]) -> list[Target]:
    scaling, out = results.get("scaling", {}), []
    slots = scaling.get("redis", {}).get("cluster", {}).get("slots")
    if slots:
        v = slots["max_deviation"]
        text = f"redis cluster: {slots['sessions']:,} sessions per master, largest deviation"
        out.append(Target(text, v, v, v, 0.10, False))
    wide = scaling.get("postgres")
    if wide:
        v = wide["append"]["p99_ms"] / wide["append"]["p50_ms"]
        text = f"helix postgres {wide['tasks']} tasks on a pool of {wide['pool']}: append p99 / p50"
        out.append(Target(text, v, v, v, 10.0, False))
    for n, run in scaling.get("sqlite", {}).items():
        v = float(run["errors"])
        writers = "1 process" if str(n) == "1" else f"{n} processes"
        out.append(Target(f"helix sqlite {writers} on one file: errors", v, v, v, 0.0, False))
    return out


def evaluate(results: dict[str, Any]) -> list[Target]:
    """Every target the run has the data for."""
    return [
        *_ratio_targets(results),
        *_floor_targets(results),
        *_growth_targets(results),
        *_concurrency_targets(results),
        *_checkpoint_targets(results),
        *_context_targets(results),
        *_scaling_targets(results),
    ]
