"""The saver's own errors, each a refinement of core's (docs/integrations/sharing.md)::

    StateStoreError
     ├── ValidationError                  validation_error
     │    ├── UnstorableValueError        (also a TypeError, as LangGraph's serializer raises)
     │    └── CorruptRecordError
     └── EventLoopError                   langgraph_event_loop (also asyncio.InvalidStateError)

Core's :class:`~helix_agents.core.errors.ForeignSessionError` (ADP-2) and
:class:`~helix_agents.core.errors.StoreUnavailableError` (ADP-7) pass through as they are.
"""

from __future__ import annotations

import asyncio

from helix_agents.core.errors import StateStoreError, ValidationError

__all__ = ["CorruptRecordError", "EventLoopError", "UnstorableValueError"]


class UnstorableValueError(ValidationError, TypeError):
    """A value that would not come back exactly as given; nothing was written (ADP-4, ADP-5).

    ``field`` names what held it: a channel, a pending write, the metadata.
    """

    def __init__(self, message: str, *, session_id: str | None = None, field: str = "") -> None:
        super().__init__(message, session_id=session_id)
        self.field = field


class CorruptRecordError(ValidationError):
    """A stored record the saver cannot read back (ADP-6); ``record`` is its id in the session."""

    def __init__(self, message: str, *, session_id: str | None = None, record: str = "") -> None:
        super().__init__(message, session_id=session_id)
        self.record = record


class EventLoopError(StateStoreError, asyncio.InvalidStateError):
    """A sync call that cannot reach the store's event loop: on it, or it is not running."""

    code = "langgraph_event_loop"
