"""The adapter's errors: each is also core's :class:`~helix_agents.core.ValidationError`.

::

    ValidationError (helix_agents.core, code ``validation_error``)
     └── CorruptEventError   a stored event this adapter cannot read back (MCP-7)
"""

from __future__ import annotations

from helix_agents.core import ValidationError

__all__ = ["CorruptEventError"]


class CorruptEventError(ValidationError):
    """A row of a stream whose ``mcp_event`` is not a JSON-RPC message (MCP-7).

    ``row_id`` names the row (its event index, or ``None`` for a row without an id).
    """

    def __init__(
        self, message: str, *, session_id: str | None = None, row_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.row_id = row_id


CorruptEventError.__module__ = "helix_agents.mcp"
