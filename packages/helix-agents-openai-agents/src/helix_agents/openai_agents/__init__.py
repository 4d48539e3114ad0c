"""The OpenAI Agents SDK ``Session`` on any helix-agents session store.

``HelixSession(session_id, store)`` stores the SDK's items as rows of the
store's session; see docs/integrations/openai-agents.md.
"""

from __future__ import annotations

from ._items import ITEM_FIELD, CorruptItemError, ItemNotJsonError, row_role
from .session import ADAPTER, HelixSession, UserIdHook

__all__ = [
    "ADAPTER",
    "ITEM_FIELD",
    "CorruptItemError",
    "HelixSession",
    "ItemNotJsonError",
    "UserIdHook",
    "row_role",
]
