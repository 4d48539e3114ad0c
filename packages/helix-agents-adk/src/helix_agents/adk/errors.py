"""The errors the ADK adapter adds to core's (docs/integrations/sharing.md, ADP-4, ADP-6)::

    ValidationError (core)                     validation_error
     └── AdkValidationError (also TypeError)   validation_error
    StateStoreError (core)
     └── CorruptEventError (also ValueError)   adk_corrupt_event

Every other error of the service is core's (``ForeignSessionError``,
``StoreUnavailableError``, …) or ADK's own (``AlreadyExistsError``,
``SessionNotFoundError``, ``StaleSessionError``).
"""

from __future__ import annotations

from helix_agents.core.errors import StateStoreError, ValidationError

__all__ = ["AdkValidationError", "CorruptEventError"]


class AdkValidationError(ValidationError, TypeError):
    """An event, a state or a name the service refuses, before anything is written.

    Core's ``ValidationError`` (hence a ``ValueError``) and a ``TypeError``: what ADK's
    own services raise for a state or an event they cannot store as JSON.
    """


class CorruptEventError(StateStoreError, ValueError):
    """A stored row holds an ``adk_event`` that is not an ADK event (edited, or newer).

    ``session_id`` is the store's session id, ``row`` the row's index in the session.
    A ``ValueError``, as ADK's database service raises for an event it cannot parse.
    """

    code = "adk_corrupt_event"

    def __init__(self, message: str, *, session_id: str | None = None, row: int = -1) -> None:
        super().__init__(message, session_id=session_id)
        self.row = row
