"""CI, LA and APR past a handful of entries: a dozen records, ties of time, many deliveries."""

from __future__ import annotations

import pytest

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.errors import (
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
)

from ._base import rule
from ._helpers import CONTEXT, LATE, Queue, approval, commit, notice, snapshot, user

# Keys whose string order is not their number order, at times with many ties.
_KEYS = [f"k{i}" for i in range(12)]


def _seconds(index: int) -> int:
    return (index * 7) % 4


async def _dozen(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(user()))
    for index in (5, 11, 0, 7, 2, 9, 1, 10, 3, 8, 6, 4):
        await q.record(store, sid, _KEYS[index], _seconds(index))
    ordered = [k for _, k in sorted((_seconds(i), k) for i, k in enumerate(_KEYS))]
    assert await q.keys(store, sid) == ordered
    # One commit of six rows delivers ten items, every one of them.
    delivered = ordered[:10]
    result = await store.append_messages(
        sid,
        commit(
            *(notice(str(n)) for n in range(6)),
            **q.deliver(*((k, i % 6) for i, k in enumerate(delivered))),
        ),
    )
    assert (result.first_index, result.message_count) == (1, 7)
    assert await q.keys(store, sid) == ordered[10:]
    # A conflict anywhere in a long list of deliveries refuses the whole commit.
    before = await snapshot(store, sid)
    for late_bad in ([*ordered[10:], delivered[7]], [*ordered[10:], "missing"]):
        with pytest.raises(
            ContextItemDeliveryConflictError if q.is_context else LateAnswerDeliveryConflictError
        ):
            await store.append_messages(
                sid, commit(notice(), notice(), **q.deliver(*((k, 1) for k in late_bad)))
            )
        assert await snapshot(store, sid) == before
    pairs = [(k, 0) for k in ordered[10:]] + [(ordered[10], 2)]
    with pytest.raises(ValidationError):
        await store.append_messages(sid, commit(notice(), notice(), **q.deliver(*pairs)))
    assert await snapshot(store, sid) == before
    # Cutting after the third row of that commit re-opens exactly what rows 4..6 delivered.
    await store.truncate_messages(sid, 1 + 3)
    reopened = {k for i, k in enumerate(delivered) if i % 6 >= 3}
    assert await q.keys(store, sid) == [k for k in ordered if k in reopened or k in ordered[10:]]


class ScaleRules:
    """Queues and approvals with a dozen entries each."""

    @rule("CI-5")
    async def test_CI_5_a_dozen_items_many_delivered_by_one_commit(
        self, store: SessionStateStore
    ) -> None:
        await _dozen(store, CONTEXT)

    @rule("LA-5")
    async def test_LA_5_a_dozen_answers_many_delivered_by_one_commit(
        self, store: SessionStateStore
    ) -> None:
        await _dozen(store, LATE)

    @rule("APR-1")
    async def test_APR_1_a_dozen_approvals_in_order(self, store: SessionStateStore) -> None:
        sid = (await store.create_session(user_id="u-apr")).id
        batch = [approval(k.replace("k", "a"), _seconds(i)) for i, k in enumerate(_KEYS)]
        await store.add_pending_approvals(sid, batch[6:])
        await store.add_pending_approvals(sid, batch[:6])
        ordered = [
            a.approval_id for a in sorted(batch, key=lambda a: (a.requested_at, a.approval_id))
        ]
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == ordered
        for gone in (ordered[5], ordered[10]):
            assert await store.resolve_approval(sid, gone) == "resolved"
        await store.add_pending_approvals(sid, batch)
        left = [a for a in ordered if a not in (ordered[5], ordered[10])]
        listed = await store.list_pending_approvals(sid)
        assert [a.approval_id for a in listed] == left
        [summary] = (await store.list_sessions("u-apr")).sessions
        assert summary.pending_approvals == len(left)
