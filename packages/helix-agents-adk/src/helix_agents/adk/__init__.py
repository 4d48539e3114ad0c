"""Google ADK session service on any helix-agents session store (docs/integrations/adk.md)."""

from ._events import EVENT_FIELD
from ._runs import session_key
from .approvals import (
    ApprovalsPendingError,
    decide_approval,
    decision_checkpoint_id,
    pause_checkpoint_id,
    resume_message,
)
from .errors import AdkValidationError, CorruptEventError
from .plugin import STRATEGY_KEY, HelixPlugin
from .service import HelixSessionService

__all__ = [
    "EVENT_FIELD",
    "STRATEGY_KEY",
    "AdkValidationError",
    "ApprovalsPendingError",
    "CorruptEventError",
    "HelixPlugin",
    "HelixSessionService",
    "decide_approval",
    "decision_checkpoint_id",
    "pause_checkpoint_id",
    "resume_message",
    "session_key",
]
