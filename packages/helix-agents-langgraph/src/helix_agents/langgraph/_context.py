"""Queued context items and late answers, delivered in one commit and shown as messages (LGF-1).

A thread's graph state lives in the saver's checkpoints; the session's log holds the
hidden ``context`` rows that deliver items (and the rows the history archive keeps).
Each context row reaches the model as a ``HumanMessage`` whose text core lowers it to,
with the id ``helix-row-<index>``, so LangGraph's ``add_messages`` keeps one copy of it
however often it is added.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import HumanMessage

from helix_agents.core import (
    ConcurrencyConflictError,
    ContextMessage,
    Message,
    MessageCountConflictError,
    SessionStateStore,
)
from helix_agents.core.runtime import context_row_text, delivery_commit

__all__ = ["ROW_ID_PREFIX", "deliver_queued", "row_messages"]

ROW_ID_PREFIX = "helix-row-"
"""The id prefix of the message that shows the log's row ``<index>`` to the model."""
_ATTEMPTS = 8


def row_messages(rows: Sequence[Message], start: int) -> list[HumanMessage]:
    """The messages the model sees for the context rows among ``rows`` (``rows[0]`` at
    index ``start`` of the log)."""
    return [
        HumanMessage(content=context_row_text(row), id=f"{ROW_ID_PREFIX}{start + i}")
        for i, row in enumerate(rows)
        if isinstance(row, ContextMessage)
    ]


async def deliver_queued(
    store: SessionStateStore, session_id: str, fence_run_id: str | None, count: int | None
) -> list[HumanMessage]:
    """Deliver every queued context item, then every late answer, in one fenced commit.

    ``count`` is the log's row count if the caller just read it (else it is read here).
    Returns the delivered rows as the model sees them, ``[]`` when nothing was queued.
    A commit that loses a race (the log moved, another runner delivered first) reads
    the count and the queues again.
    """
    for _ in range(_ATTEMPTS):
        expected = await store.get_message_count(session_id) if count is None else count
        count = None
        commit = await delivery_commit(
            store, session_id, fence_run_id=fence_run_id, expected=expected
        )
        if commit is None:
            return []
        try:
            await store.append_messages(session_id, commit)
        except ConcurrencyConflictError:
            continue
        return row_messages(commit.messages, expected)
    raise MessageCountConflictError(
        f"session {session_id!r}: delivery gave up after {_ATTEMPTS} attempts",
        session_id=session_id,
    )
