"""Context rows as SDK items, and the commit that delivers queued items (OAI-1, OAI-3).

A hidden ``context`` row (a delivered context item or late-answer notice) reaches
the model as core lowers it for a provider without a ``context`` role: a ``user``
message whose text is :func:`~helix_agents.core.runtime.context_row_text`. See
docs/integrations/openai-agents.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix_agents.core import ContextMessage, Message
from helix_agents.core.runtime import context_row_text

from ._items import decode_item

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["lowered", "read_item"]


def lowered(row: ContextMessage) -> TResponseInputItem:
    """The SDK item a model sees for the context row ``row``."""
    return {"role": "user", "content": context_row_text(row)}


def read_item(row: Message, session_id: str) -> TResponseInputItem | None:
    """The item of ``row`` for ``get_items``: a context row lowered, ``None`` for a row of
    another runtime."""
    if isinstance(row, ContextMessage):
        return lowered(row)
    return decode_item(row, session_id)
