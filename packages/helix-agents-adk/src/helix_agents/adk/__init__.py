"""Google ADK session service on any helix-agents session store (docs/integrations/adk.md)."""

from ._artifact_parts import MAX_ARTIFACT_BYTES
from ._events import EVENT_FIELD
from .artifact_errors import ArtifactTooLargeError
from .artifacts import HelixArtifactService
from .errors import AdkValidationError, CorruptEventError
from .memory import HelixMemoryService
from .service import HelixSessionService

__all__ = [
    "EVENT_FIELD",
    "MAX_ARTIFACT_BYTES",
    "AdkValidationError",
    "ArtifactTooLargeError",
    "CorruptEventError",
    "HelixArtifactService",
    "HelixMemoryService",
    "HelixSessionService",
]
