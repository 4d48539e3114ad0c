"""What one run measures, how long, and against which servers."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ROOT", "Servers", "Settings"]

ROOT = Path(__file__).resolve().parent.parent
"""The workspace root: results go to ``bench/results/`` and ``docs/``."""


@dataclass(frozen=True, slots=True)
class Servers:
    """The local servers, from the same env variables the tests read."""

    postgres: str
    redis: str

    @classmethod
    def from_env(cls) -> Servers:
        """``HELIX_POSTGRES_URL`` / ``HELIX_REDIS_URL``, else the local default ports."""
        return cls(
            postgres=os.environ.get(
                "HELIX_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
            ),
            redis=os.environ.get("HELIX_REDIS_URL", "redis://127.0.0.1:6379/0"),
        )


@dataclass(frozen=True, slots=True)
class Settings:
    """Sizes of one run; :meth:`quick` and :meth:`full` are the two modes."""

    mode: str
    sessions: int = 50
    """Session ids one repetition's turns spread over."""
    turns: int = 1000
    """Turns per repetition and system: 20 per session, so each conversation reaches 60 rows."""
    chunk: int = 100
    """Turns one system runs before the next takes its turn, within a repetition."""
    warmup_turns: int = 100
    repetitions: int = 5
    read_last: int = 20
    floor_samples: int = 2000
    paired_turns: int = 400
    """Rounds of append, read and floor call per repetition for each of our stores."""
    growth_sizes: tuple[int, ...] = (100, 10_000, 100_000)
    growth_ops: int = 200
    listing_sizes: tuple[int, ...] = (100, 100_000)
    listing_ops: int = 200
    concurrency_turns: int = 1600
    concurrency_tasks: int = 16
    concurrency_repetitions: int = 5
    checkpoint_sizes: tuple[int, ...] = (10, 10_000)
    """LangGraph threads of this many checkpoints (``bench/checkpoints.py``)."""
    checkpoint_ops: int = 200
    history_rows: int = 100_000
    """Rows of the session the history search runs over (docs/context-strategies.md)."""
    context_ops: int = 20
    """Samples of each context-store operation per backend."""
    runner_turns: int = 300
    """Agents SDK runner turns per repetition and session (the ``runner`` phase)."""
    adk_events: int = 500
    """Events appended to the one ADK session of each service (the ``adk`` phase)."""
    adk_ops: int = 100
    """Samples of each ADK ``get_session`` read per service."""
    replication_ops: int = 500
    """Appends per store, with and without waiting for a replica (the ``replication`` phase)."""
    maf_turns: int = 250
    """Turns saved to the one conversation of each Agent Framework history provider."""
    maf_ops: int = 100
    """Samples of each provider's read of the whole conversation."""

    @classmethod
    def quick(cls) -> Settings:
        """A few minutes: fewer repetitions and samples, 10,000 sessions for the big listing."""
        return cls(
            mode="quick",
            warmup_turns=50,
            repetitions=2,
            floor_samples=500,
            paired_turns=150,
            growth_ops=60,
            listing_sizes=(100, 10_000),
            listing_ops=60,
            concurrency_turns=640,
            concurrency_repetitions=2,
            checkpoint_ops=60,
            context_ops=5,
            runner_turns=100,
            adk_events=100,
            adk_ops=20,
            replication_ops=150,
            maf_turns=50,
            maf_ops=20,
        )

    @classmethod
    def full(cls) -> Settings:
        """Every size the issue asks for, with five interleaved repetitions."""
        return cls(mode="full")
