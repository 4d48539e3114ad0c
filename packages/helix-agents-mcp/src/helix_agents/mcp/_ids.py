"""Event ids: ``<session id>:<row index>``, parsed back without trusting the client.

A client sends the id back in ``Last-Event-ID``, so parsing accepts any string and
answers ``None`` for one this store could not have minted (MCP-2 of docs/integrations/mcp.md).
"""

from __future__ import annotations

from helix_agents.core import ValidationError
from helix_agents.core.inputs import check_id

__all__ = ["event_id", "parse_event_id"]

_SEPARATOR = ":"
# Row indexes stay below 2**62 (docs/limits.md): at most 19 decimal digits.
_MAX_INDEX_DIGITS = 19


def event_id(session_id: str, index: int) -> str:
    """The id of the event stored as row ``index`` of ``session_id``."""
    return f"{session_id}{_SEPARATOR}{index}"


def parse_event_id(value: object) -> tuple[str, int] | None:
    """``(session id, row index)`` of an id :func:`event_id` could have made, else ``None``."""
    if not isinstance(value, str):
        return None
    session_id, separator, index = value.rpartition(_SEPARATOR)
    if not separator or not index.isascii() or not index.isdigit():
        return None
    if len(index) > _MAX_INDEX_DIGITS or (len(index) > 1 and index.startswith("0")):
        return None
    try:
        check_id(session_id, "session_id")
    except ValidationError:
        return None
    return session_id, int(index)
