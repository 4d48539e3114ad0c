"""Google ADK session service on any helix-agents session store (docs/integrations/adk.md)."""

from ._artifact_parts import MAX_ARTIFACT_BYTES
from ._events import EVENT_FIELD
from ._runs import session_key, user_key
from .approvals import (
    ApprovalsPendingError,
    decide_approval,
    decision_checkpoint_id,
    pause_checkpoint_id,
    resume_message,
)
from .artifact_errors import ArtifactTooLargeError
from .artifacts import HelixArtifactService
from .erase import erase_adk_user
from .errors import AdkValidationError, CorruptEventError
from .memory import HelixMemoryService
from .plugin import STRATEGY_KEY, HelixPlugin
from .service import HelixSessionService

__all__ = [
    "EVENT_FIELD",
    "MAX_ARTIFACT_BYTES",
    "STRATEGY_KEY",
    "AdkValidationError",
    "ApprovalsPendingError",
    "ArtifactTooLargeError",
    "CorruptEventError",
    "HelixArtifactService",
    "HelixMemoryService",
    "HelixPlugin",
    "HelixSessionService",
    "decide_approval",
    "decision_checkpoint_id",
    "erase_adk_user",
    "pause_checkpoint_id",
    "resume_message",
    "session_key",
    "user_key",
]
