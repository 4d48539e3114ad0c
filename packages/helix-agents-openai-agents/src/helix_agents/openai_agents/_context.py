"""Context rows as SDK items, and the commit that delivers queued items (OAI-1, OAI-3).

A hidden ``context`` row (a delivered context item or late-answer notice) reaches
the model as core lowers it for a provider without a ``context`` role: a ``user``
message whose text is :func:`~helix_agents.core.runtime.context_row_text`. See
docs/integrations/openai-agents.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix_agents.core import ContextMessage, Message, MessageCommit, SessionStateStore
from helix_agents.core.models import ContextItemDelivery, LateAnswerDelivery
from helix_agents.core.runtime import context_row_text, late_answer_notice

from ._items import decode_item

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["delivery_commit", "lowered", "read_item"]


def lowered(row: ContextMessage) -> TResponseInputItem:
    """The SDK item a model sees for the context row ``row``."""
    return {"role": "user", "content": context_row_text(row)}


def read_item(row: Message, session_id: str) -> TResponseInputItem | None:
    """The item of ``row`` for ``get_items``: a context row lowered, ``None`` for a row of
    another runtime."""
    if isinstance(row, ContextMessage):
        return lowered(row)
    return decode_item(row, session_id)


async def delivery_commit(
    store: SessionStateStore, session_id: str, fence_run_id: str | None, expected: int
) -> MessageCommit | None:
    """One commit delivering every queued context item and late answer, or ``None``.

    Its rows are the context rows that carry them, context items first; it lands
    only if the log still holds ``expected`` rows (and the run is live, if fenced).
    """
    items = await store.list_undelivered_context_items(session_id)
    answers = await store.list_undelivered_late_answers(session_id)
    if not items and not answers:
        return None
    rows = [record.item.to_message() for record in items]
    rows += [late_answer_notice(answer) for answer in answers]
    return MessageCommit(
        messages=tuple(rows),
        fence_run_id=fence_run_id,
        expect_message_count=expected,
        deliver_context_items=tuple(
            ContextItemDelivery(key=record.key, row_offset=i) for i, record in enumerate(items)
        ),
        deliver_late_answers=tuple(
            LateAnswerDelivery(call_id=answer.call_id, row_offset=len(items) + i)
            for i, answer in enumerate(answers)
        ),
    )
