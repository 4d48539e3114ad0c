"""CrewAI flow persistence on any helix-agents session store (docs/integrations/crewai.md)."""

from ._loop import EventLoopError
from .persistence import (
    ADAPTER,
    MAX_STATE_BYTES,
    CorruptFlowStateError,
    FlowStateError,
    HelixFlowPersistence,
)

__all__ = [
    "ADAPTER",
    "MAX_STATE_BYTES",
    "CorruptFlowStateError",
    "EventLoopError",
    "FlowStateError",
    "HelixFlowPersistence",
]
