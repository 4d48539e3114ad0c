"""The PNG: throughput, latency against the floors, growth, and storage, one panel each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

__all__ = ["plot"]

_COLORS = {"helix": "#2b7bba", "openai-agents": "#e08a2c", "langgraph": "#6a9f3a"}
_SERVER_COLORS = ("#7f7f7f", "#2b7bba", "#9467bd", "#d62728")
_FLOOR_STYLE = {"redis PING": ":", "postgres 1-RT insert tx": "--"}


def _ok(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in results["turns"] if not t["error"]]


def _throughput(ax: Axes, turns: list[dict[str, Any]]) -> None:
    names = [t["name"] for t in turns]
    med = [t["turns_per_s"]["median"] for t in turns]
    err = [
        [m - t["turns_per_s"]["low"] for m, t in zip(med, turns, strict=True)],
        [t["turns_per_s"]["high"] - m for m, t in zip(med, turns, strict=True)],
    ]
    ax.barh(names, med, xerr=err, color=[_COLORS[t["family"]] for t in turns])
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_title("Turns per second, one client (median, min-max)")
    ax.set_xlabel("turns/s (log)")


def _latency(ax: Axes, turns: list[dict[str, Any]], floors: dict[str, Any]) -> None:
    names = [t["name"] for t in turns]
    y = list(range(len(names)))
    ax.barh(
        [i - 0.2 for i in y],
        [t["append"]["p50_ms"] for t in turns],
        height=0.4,
        color=[_COLORS[t["family"]] for t in turns],
        label="append p50",
    )
    ax.barh(
        [i + 0.2 for i in y],
        [t["read"]["p50_ms"] for t in turns],
        height=0.4,
        color="#999999",
        label="read last 20 p50",
    )
    for name, style in _FLOOR_STYLE.items():
        if name in floors:
            ax.axvline(
                floors[name]["p50_ms"], color="black", linestyle=style, label=f"floor: {name}"
            )
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("ms (log)")
    ax.set_title("Append and read p50 against the server floors")
    ax.legend(fontsize=7)


def _growth(ax: Axes, growth: dict[str, Any]) -> None:
    if not growth:  # a run without the growth phase (--phases)
        ax.set_axis_off()
        return
    for (server, g), color in zip(growth.items(), _SERVER_COLORS, strict=False):
        for op, style in (("append", "-o"), ("read", "--s")):
            sizes = [int(s) for s in g[op]]
            p50 = [v["p50_ms"] for v in g[op].values()]
            ax.plot(sizes, p50, style, color=color, label=f"{server} {op}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows already in the session (log)")
    ax.set_ylabel("p50 ms (log)")
    ax.set_title("Cost growth of our stores")
    ax.legend(fontsize=7, ncol=2)


def _storage(ax: Axes, turns: list[dict[str, Any]]) -> None:
    measured = [t for t in turns if t["bytes_per_row"]]
    ax.barh(
        [t["name"] for t in measured],
        [t["bytes_per_row"] for t in measured],
        color=[_COLORS[t["family"]] for t in measured],
    )
    ax.invert_yaxis()
    ax.set_title("Storage per stored row (after the turn workload)")
    ax.set_xlabel("bytes")


def plot(results: dict[str, Any], path: Path) -> None:
    """Draw the four panels into ``path``."""
    turns = _ok(results)
    fig, axes = plt.subplots(2, 2, figsize=(15, 10))
    _throughput(axes[0][0], turns)
    _latency(axes[0][1], turns, results.get("floors", {}))
    _growth(axes[1][0], results.get("growth", {}))
    _storage(axes[1][1], turns)
    fig.suptitle(f"helix-agents session stores vs alternatives ({results['settings']['mode']} run)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
