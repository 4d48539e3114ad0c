"""Context rows as ADK events, and the commit that delivers queued items (ADKF-1, ADKF-3).

A hidden ``context`` row (a delivered context item or late-answer notice) reaches the
model as core lowers it for a provider without a ``context`` role: a ``user`` turn whose
text is :func:`~helix_agents.core.runtime.context_row_text`. Read through the plugin's
session service, each is an event of the session at its place in the log, so ADK puts it
in every later model request by itself. See docs/integrations/adk.md.
"""

from __future__ import annotations

import time

from google.adk.events.event import Event
from google.genai import types

from helix_agents.core import ContextMessage, MessageCommit, SessionStateStore
from helix_agents.core.models import ContextItemDelivery, LateAnswerDelivery
from helix_agents.core.runtime import context_row_text, late_answer_notice

__all__ = ["CONTEXT_AUTHOR", "context_event", "delivery_commit"]

CONTEXT_AUTHOR = "user"
"""The author of a context row's event: the model reads it as a user turn."""


def context_event(row: ContextMessage, index: int, invocation_id: str = "") -> Event:
    """The event that shows context row ``index`` to the model.

    Its id names the row; its timestamp is the read's, so a read filtered by time keeps it.
    """
    text = context_row_text(row)
    return Event(
        id=f"helix-context-{index}",
        invocation_id=invocation_id,
        author=CONTEXT_AUTHOR,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        timestamp=time.time(),
    )


async def delivery_commit(
    store: SessionStateStore, sid: str, fence_run_id: str, expected: int
) -> tuple[MessageCommit, list[ContextMessage]] | None:
    """One commit delivering every queued context item and late answer, with its rows;
    ``None`` when nothing is queued.

    Its rows are the context rows that carry them, context items first; it lands only
    while the run is live and the log still holds ``expected`` rows.
    """
    items = await store.list_undelivered_context_items(sid)
    answers = await store.list_undelivered_late_answers(sid)
    if not items and not answers:
        return None
    rows = [record.item.to_message() for record in items]
    rows += [late_answer_notice(answer) for answer in answers]
    commit = MessageCommit(
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
    return commit, rows
