"""Google ADK session service on any helix-agents session store (docs/integrations/adk.md)."""

from ._events import EVENT_FIELD
from .errors import AdkValidationError, CorruptEventError
from .service import HelixSessionService

__all__ = ["EVENT_FIELD", "AdkValidationError", "CorruptEventError", "HelixSessionService"]
