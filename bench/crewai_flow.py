"""CrewAI flow persistence: ``HelixFlowPersistence`` beside CrewAI's ``SQLiteFlowPersistence``.

A flow step persists as ``@persist`` does it: ``save_state`` of the flow's state after the
method, then (as a resumed flow or a reader does) ``load_state`` of the latest. Each
persistence runs ``--steps`` steps of one flow with a state of ``--size`` list entries,
interleaved so noise hits all alike; p50/p99 of the step (save + load) and the ratio of
ours to CrewAI's SQLite default. Ours run on SQLite and PostgreSQL.

Not part of ``python -m bench``: CrewAI cannot be installed in the workspace's environment
(it pins ``mcp<2``). Run it in the crewai overlay, from the repository's root::

    uv run --no-sync --with crewai==1.15.30 --with-editable packages/helix-agents-core \\
        --with-editable packages/helix-agents-crewai python -m bench.crewai_flow

``HELIX_POSTGRES_URL`` points at another PostgreSQL (default: the local one, trust auth).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from crewai.flow.persistence.base import FlowPersistence
from crewai.flow.persistence.sqlite import SQLiteFlowPersistence
from psycopg import sql

from helix_agents.crewai import HelixFlowPersistence

from .stats import Latencies

__all__ = ["main", "measure"]

POSTGRES = os.environ.get("HELIX_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _state(step: int, size: int) -> dict[str, Any]:
    return {
        "id": "bench-flow",
        "step": step,
        "notes": [{"i": i, "text": f"note {i} " + "lorem " * 4} for i in range(size)],
    }


def measure(persistences: dict[str, FlowPersistence], steps: int, size: int) -> dict[str, Any]:
    """Per persistence: p50/p99 (ms) of one step, ``save_state`` then ``load_state``."""
    lat = {name: Latencies() for name in persistences}
    flow = f"flow-{uuid.uuid4().hex[:8]}"
    clock = time.perf_counter
    for step in range(steps):
        state = _state(step, size)
        for name, persistence in persistences.items():
            t0 = clock()
            persistence.save_state(flow, f"method_{step}", state)
            loaded = persistence.load_state(flow)
            lat[name].add(clock() - t0)
            if loaded != state:
                raise AssertionError(f"{name}: step {step} read back {loaded!r:.80}")
    return {name: s.summary() for name, s in lat.items()}


def table(results: dict[str, Any], baseline: str) -> list[str]:
    """The results as a Markdown table, each ratio to ``baseline``'s."""
    base = results[baseline]
    lines = [
        "| persistence | step p50 (ms) | step p99 (ms) | p50 / CrewAI SQLite's p50 |",
        "|---|---:|---:|---:|",
    ]
    for name, s in results.items():
        ratio = s["p50_ms"] / base["p50_ms"]
        lines.append(f"| {name} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} | {ratio:.2f}x |")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Run the bench and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="flow steps per persistence")
    parser.add_argument("--size", type=int, default=50, help="list entries in the state")
    args = parser.parse_args(argv)
    schema = f"bench_crewai_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        persistences: dict[str, FlowPersistence] = {
            "CrewAI SQLiteFlowPersistence": SQLiteFlowPersistence(str(work / "crewai.db")),
            "helix SQLite": HelixFlowPersistence(f"sqlite:///{work / 'helix.db'}"),
            "helix PostgreSQL": HelixFlowPersistence(
                f"{POSTGRES}?namespace={schema}&auto_migrate=true"
            ),
        }
        try:
            results = measure(persistences, args.steps, args.size)
        finally:
            for persistence in persistences.values():
                if isinstance(persistence, HelixFlowPersistence):
                    persistence.close()
            with psycopg.connect(POSTGRES, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )
    print(f"{args.steps} steps, a state of {args.size} entries")
    print("\n".join(table(results, "CrewAI SQLiteFlowPersistence")))


if __name__ == "__main__":
    main()
