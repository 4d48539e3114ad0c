"""The adapter's errors: each is also core's :class:`~helix_agents.core.ValidationError`.

Both are ``ValueError`` too, which is what Agent Framework's own history providers raise
for a record they cannot write or read.

::

    ValidationError (helix_agents.core, code ``validation_error``)
     ├── MessageNotStorableError   a message that would not come back equal (MAF-9)
     └── CorruptMessageError       a stored row this adapter cannot read back (MAF-10)
"""

from __future__ import annotations

from helix_agents.core import ValidationError

__all__ = ["CorruptMessageError", "MessageNotStorableError"]


class MessageNotStorableError(ValidationError):
    """A message refused before any write; ``index`` is its place in the saved list."""

    def __init__(self, message: str, *, session_id: str | None = None, index: int = 0) -> None:
        super().__init__(message, session_id=session_id)
        self.index = index


class CorruptMessageError(ValidationError):
    """A row whose ``agent_framework_message`` is not a message; ``row_id`` names the row."""

    def __init__(
        self, message: str, *, session_id: str | None = None, row_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.row_id = row_id


MessageNotStorableError.__module__ = "helix_agents.agent_framework"
CorruptMessageError.__module__ = "helix_agents.agent_framework"
