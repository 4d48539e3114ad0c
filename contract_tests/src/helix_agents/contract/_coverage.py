"""How many steps of each kind the state machine tried, and how many of them landed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = [
    "MAX_FAULT_SHARE",
    "MIN_LANDED_SHARE",
    "MIN_TRIES",
    "STEP_KINDS",
    "StepCounts",
    "record_run",
    "recorded_runs",
]

STEP_KINDS = (
    "create",
    "delete",
    "clear",
    "append",
    "start_run",
    "finish",
    "record",
    "checkpoint",
    "truncate",
    "pop",
    "replace",
    "clone",
    "add_approval",
    "resolve",
)
"""Every kind of step the machine takes (Hypothesis may leave one out of a short run)."""

MIN_LANDED_SHARE = 0.6
"""The share of each kind of step that must land (most are built valid, a minority not)."""

MIN_TRIES = 20
"""A kind's share is judged once it was tried this often (fewer tries say little)."""

MAX_FAULT_SHARE = 1 / 3
"""Within one example, a step gets a fault only while its kind's refusals stay within this share.

So at least two thirds of each kind land, above ``MIN_LANDED_SHARE`` whatever Hypothesis draws.
"""


@dataclass
class StepCounts:
    """Steps tried and landed, by kind, over one whole run (every example)."""

    tried: Counter[str] = field(default_factory=Counter)
    landed: Counter[str] = field(default_factory=Counter)

    def count(self, kind: str, landed: bool) -> None:
        """Count one step of ``kind``."""
        self.tried[kind] += 1
        self.landed[kind] += landed

    def allows_fault(self, kind: str) -> bool:
        """Whether one more refused step of ``kind`` keeps it within ``MAX_FAULT_SHARE``."""
        refused = self.tried[kind] - self.landed[kind]
        return refused + 1 <= MAX_FAULT_SHARE * (self.tried[kind] + 1)

    def shortfalls(self, min_share: float = MIN_LANDED_SHARE) -> list[str]:
        """The kinds tried at least ``MIN_TRIES`` times that landed less than ``min_share``."""
        return [
            kind
            for kind in STEP_KINDS
            if self.tried[kind] >= MIN_TRIES and self.landed[kind] / self.tried[kind] < min_share
        ]

    def table(self) -> str:
        """One line: ``kind landed/tried`` for every kind."""
        return ", ".join(f"{k} {self.landed[k]}/{self.tried[k]}" for k in STEP_KINDS)


_RUNS: list[tuple[str, StepCounts]] = []


def recorded_runs() -> list[tuple[str, StepCounts]]:
    """The counts of every run in this process, each under the label it was recorded with."""
    return _RUNS


def record_run(label: str, counts: StepCounts) -> None:
    """Keep ``counts`` for the end-of-session summary."""
    _RUNS.append((label, counts))
