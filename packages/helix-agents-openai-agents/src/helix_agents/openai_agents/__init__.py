"""The OpenAI Agents SDK ``Session`` on any helix-agents session store.

``HelixSession(session_id, store)`` stores the SDK's items as rows of the
store's session; ``HelixRun`` makes a ``Runner.run`` one of the store's runs,
with context items, late answers and approvals; see
docs/integrations/openai-agents.md.
"""

from __future__ import annotations

from ._items import ITEM_FIELD, CorruptItemError, ItemNotJsonError, row_role
from .approvals import (
    ApprovalsPendingError,
    decide_approval,
    decision_checkpoint_id,
    pause_checkpoint_id,
)
from .run import HelixRun
from .session import ADAPTER, HelixSession, UserIdHook

__all__ = [
    "ADAPTER",
    "ITEM_FIELD",
    "ApprovalsPendingError",
    "CorruptItemError",
    "HelixRun",
    "HelixSession",
    "ItemNotJsonError",
    "UserIdHook",
    "decide_approval",
    "decision_checkpoint_id",
    "pause_checkpoint_id",
    "row_role",
]
