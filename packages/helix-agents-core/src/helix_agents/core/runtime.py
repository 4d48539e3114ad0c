"""What a runtime needs to use the queues: deliver them as rows, show them to a model."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from .errors import ConcurrencyConflictError
from .messages import ChatMessage, ContextMessage, Message
from .models import (
    ContextItemDelivery,
    LateAnswer,
    LateAnswerDelivery,
    MessageCommit,
)
from .protocol import SessionStateStore

__all__ = [
    "context_row_text",
    "deliver_context_items",
    "deliver_late_answer_notices",
    "delivery_commit",
    "late_answer_notice",
    "lower_context_rows",
]


def context_row_text(row: ContextMessage) -> str:
    """The text a provider without a ``context`` role sees for ``row``."""
    attrs = f'kind="{row.kind}"'
    if row.source is not None:
        attrs += f' source="{row.source}"'
    return f"<context {attrs}>\n{row.content}\n</context>"


def lower_context_rows(rows: Iterable[Message]) -> list[Message]:
    """``rows`` with each context row turned into a hidden ``user`` turn."""
    return [
        ChatMessage(role="user", content=context_row_text(row))
        if isinstance(row, ContextMessage)
        else row
        for row in rows
    ]


def late_answer_notice(answer: LateAnswer) -> ContextMessage:
    """The ``notice`` row that tells the model a tool answered after its run ended."""
    output = json.dumps(answer.output, ensure_ascii=False, sort_keys=True)
    return ContextMessage(
        kind="notice",
        content=(
            f"The tool call {answer.call_id} ({answer.tool_name}) answered after its run "
            f"had ended. Its output: {output}"
        ),
        source="late_answer",
        metadata={"call_id": answer.call_id, "tool_name": answer.tool_name},
    )


async def delivery_commit(
    store: SessionStateStore, session_id: str, *, fence_run_id: str | None, expected: int
) -> MessageCommit | None:
    """One commit delivering every queued context item and late answer, or ``None`` when
    nothing is queued: what a framework adapter sends before a model call.

    Its rows are the context rows that carry them, context items first, then a
    :func:`late_answer_notice` per answer; it lands only if the log still holds
    ``expected`` rows (and while the run is live, with ``fence_run_id``).
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


async def deliver_context_items(
    store: SessionStateStore, session_id: str, *, fence_run_id: str | None = None
) -> list[Message]:
    """Append one context row per queued item, marking each delivered with it.

    Commits with the log length it read; if another writer moved the log first
    it delivers nothing and returns ``[]`` (the items stay queued).
    """
    count = await store.get_message_count(session_id)
    items = await store.list_undelivered_context_items(session_id)
    rows = [record.item.to_message() for record in items]
    context = [ContextItemDelivery(key=r.key, row_offset=i) for i, r in enumerate(items)]
    return await _deliver(store, session_id, count, rows, fence_run_id, context=context)


async def deliver_late_answer_notices(
    store: SessionStateStore, session_id: str, *, fence_run_id: str | None = None
) -> list[Message]:
    """Append one notice row per queued late answer, marking each delivered with it.

    Commits with the log length it read; if the log moved it delivers nothing,
    returns ``[]`` and the answers stay queued (EMC-4).
    """
    count = await store.get_message_count(session_id)
    answers = await store.list_undelivered_late_answers(session_id)
    rows = [late_answer_notice(answer) for answer in answers]
    late = [LateAnswerDelivery(call_id=x.call_id, row_offset=i) for i, x in enumerate(answers)]
    return await _deliver(store, session_id, count, rows, fence_run_id, late=late)


async def _deliver(
    store: SessionStateStore,
    session_id: str,
    count: int,
    rows: Sequence[Message],
    fence_run_id: str | None,
    *,
    context: Sequence[ContextItemDelivery] = (),
    late: Sequence[LateAnswerDelivery] = (),
) -> list[Message]:
    """Append ``rows`` with their deliveries if the log still holds ``count`` rows.

    ``[]`` when nothing is queued or another writer moved the log first.
    """
    if not rows:
        return []
    commit = MessageCommit(
        messages=tuple(rows),
        fence_run_id=fence_run_id,
        expect_message_count=count,
        deliver_context_items=tuple(context),
        deliver_late_answers=tuple(late),
    )
    try:
        await store.append_messages(session_id, commit)
    except ConcurrencyConflictError:
        return []
    return list(rows)
