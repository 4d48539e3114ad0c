"""Which context strategy a run uses, and what each one turns on (docs/context-strategies.md)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["STRATEGIES", "ContextStrategy", "StrategyFeatures", "features", "resolve_strategy"]

logger = logging.getLogger("helix_agents.core.context")

ContextStrategy: TypeAlias = Literal["static", "hybrid", "dynamic"]
"""How an agent's context is assembled (docs/context-strategies.md)."""
STRATEGIES: tuple[ContextStrategy, ...] = ("static", "hybrid", "dynamic")
"""Every context strategy, in order of how much the store manages."""


@dataclass(frozen=True, slots=True)
class StrategyFeatures:
    """What a strategy turns on; compaction itself runs under all three."""

    offload_outputs: bool
    preserve_history: bool
    lazy_tools: bool


_FEATURES: dict[ContextStrategy, StrategyFeatures] = {
    "static": StrategyFeatures(offload_outputs=False, preserve_history=False, lazy_tools=False),
    "hybrid": StrategyFeatures(offload_outputs=True, preserve_history=True, lazy_tools=False),
    "dynamic": StrategyFeatures(offload_outputs=True, preserve_history=True, lazy_tools=True),
}


def features(strategy: ContextStrategy) -> StrategyFeatures:
    """The features ``strategy`` turns on."""
    return _FEATURES[strategy]


def resolve_strategy(
    agent_value: str | None, model_value: str | None, *, default: ContextStrategy = "hybrid"
) -> ContextStrategy:
    """The agent's value, else the model's, else ``default`` (CS-13).

    Values are compared case-insensitively, blanks ignored. A value that names
    no strategy is logged as a warning naming it and its level, and resolution
    goes on to the next level — it never silently becomes the default.
    """
    for level, value in (("agent", agent_value), ("model", model_value)):
        if value is None:
            continue
        normal = value.strip().lower() if isinstance(value, str) else None
        if normal in STRATEGIES:
            return normal
        logger.warning(
            "unknown context strategy %r on the %s (expected one of %s); trying the next level",
            value,
            level,
            ", ".join(STRATEGIES),
        )
    return default
