"""MCP streamable-HTTP resumability on any helix-agents session store.

:class:`HelixEventStore` is the MCP SDK's ``EventStore``: pass it as ``event_store=`` to a
streamable-HTTP server and a client resumes a dropped stream with ``Last-Event-ID``, on this
server or another one that shares the store (docs/integrations/mcp.md).
"""

from .errors import CorruptEventError
from .event_store import ADAPTER, EVENT_FIELD, REPLAY_PAGE, STREAM_KEY, HelixEventStore

__all__ = [
    "ADAPTER",
    "EVENT_FIELD",
    "REPLAY_PAGE",
    "STREAM_KEY",
    "CorruptEventError",
    "HelixEventStore",
]
