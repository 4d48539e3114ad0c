"""A LangGraph checkpointer over any helix-agents session store.

``graph.compile(checkpointer=HelixCheckpointSaver(store))`` persists threads in
whichever store it is given: memory, SQLite, Postgres or Redis. See
docs/integrations/langgraph.md.
"""

from helix_agents.core.errors import StaleCheckpointError

from ._fence import RUN_ID_KEY
from .approvals import (
    ApprovalsPendingError,
    decide_approval,
    decision_checkpoint_id,
    pause_checkpoint_id,
)
from .errors import CorruptRecordError, EventLoopError, UnstorableValueError
from .memory_store import HelixMemoryStore
from .run import CONTEXT_TOOLS, STRATEGY_KEY, HelixGraphRun, helix_context, helix_run
from .saver import FORK, HelixCheckpointSaver
from .tools import activate_tool_source, read_tool_output, recall_history

__all__ = [
    "CONTEXT_TOOLS",
    "FORK",
    "RUN_ID_KEY",
    "STRATEGY_KEY",
    "ApprovalsPendingError",
    "CorruptRecordError",
    "EventLoopError",
    "HelixCheckpointSaver",
    "HelixGraphRun",
    "HelixMemoryStore",
    "StaleCheckpointError",
    "UnstorableValueError",
    "activate_tool_source",
    "decide_approval",
    "decision_checkpoint_id",
    "helix_context",
    "helix_run",
    "pause_checkpoint_id",
    "read_tool_output",
    "recall_history",
]
