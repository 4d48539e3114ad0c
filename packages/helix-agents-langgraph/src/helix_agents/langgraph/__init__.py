"""A LangGraph checkpointer over any helix-agents session store.

``graph.compile(checkpointer=HelixCheckpointSaver(store))`` persists threads in
whichever store it is given: memory, SQLite, Postgres or Redis. See
docs/integrations/langgraph.md.
"""

from helix_agents.core.errors import StaleCheckpointError

from .errors import CorruptRecordError, EventLoopError, UnstorableValueError
from .memory_store import HelixMemoryStore
from .saver import FORK, HelixCheckpointSaver

__all__ = [
    "FORK",
    "CorruptRecordError",
    "EventLoopError",
    "HelixCheckpointSaver",
    "HelixMemoryStore",
    "StaleCheckpointError",
    "UnstorableValueError",
]
