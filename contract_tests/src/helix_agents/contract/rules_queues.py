"""CI and LA: the context-item queue and the late-answer queue.

LA-1..LA-8 mirror CI-1..CI-8 with ``call_id`` in place of ``key``, so each
check is written once against a :class:`Queue` and named twice.
"""

from __future__ import annotations

import pytest

from helix_agents.core import (
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.errors import (
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
)

from ._base import rule
from ._helpers import CONTEXT, LATE, Queue, commit, notice, snapshot, start, user


def _conflict(queue: Queue) -> type[Exception]:
    return ContextItemDeliveryConflictError if queue.is_context else LateAnswerDeliveryConflictError


async def _insert_once(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    assert await q.record(store, sid, "k1", 1, variant="first") is True
    before = await snapshot(store, sid)
    assert await q.record(store, sid, "k1", 0, variant="second") is False
    assert await snapshot(store, sid) == before
    [only] = await q.listing(store, sid)
    assert only == q.make("k1", 1, variant="first")
    await store.append_messages(sid, commit(notice(), **q.deliver(("k1", 0))))
    assert await q.record(store, sid, "k1", 2, variant="third") is False
    assert await q.keys(store, sid) == []


async def _missing_session(store: SessionStateStore, q: Queue) -> None:
    with pytest.raises(SessionNotFoundError):
        await q.record(store, "no-such-session", "k1")
    with pytest.raises(SessionNotFoundError):
        await q.listing(store, "no-such-session")
    assert await store.get_session("no-such-session") is None


async def _fenced_record(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    before = await snapshot(store, sid)
    with pytest.raises(RunSupersededError):
        await q.record(store, sid, "k0", fence_run_id="r1")
    assert await snapshot(store, sid) == before
    await store.append_messages(sid, commit(user(), start_run=start("r1")))
    assert await q.record(store, sid, "k1", fence_run_id="r1") is True
    await store.append_messages(sid, commit(user(), start_run=start("r2")))
    before = await snapshot(store, sid)
    with pytest.raises(RunSupersededError):
        await q.record(store, sid, "k2", fence_run_id="r1")
    assert await snapshot(store, sid) == before
    await store.finish_run(sid, "r2", "completed")
    before = await snapshot(store, sid)
    with pytest.raises(RunSupersededError):
        await q.record(store, sid, "k3", fence_run_id="r2")
    assert await snapshot(store, sid) == before
    assert await q.keys(store, sid) == ["k1"]


async def _listing_order(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    for key, seconds in [("c", 5), ("b", 1), ("a", 5), ("d", 3), ("e", 0)]:
        await q.record(store, sid, key, seconds)
    assert await q.keys(store, sid) == ["e", "b", "d", "a", "c"]
    await store.append_messages(sid, commit(notice(), **q.deliver(("d", 0))))
    assert await q.keys(store, sid) == ["e", "b", "a", "c"]


async def _delivered_with_row_index(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(user(), user(), user(), user(), user()))
    await q.record(store, sid, "k1")
    result = await store.append_messages(sid, commit(user(), notice(), **q.deliver(("k1", 1))))
    assert (result.first_index, result.message_count) == (5, 7)
    assert await q.keys(store, sid) == []
    # Delivered at index 6: keeping 7 or 6+1 rows keeps it delivered, keeping 6 re-opens it.
    await store.truncate_messages(sid, 7)
    assert await q.keys(store, sid) == []
    await store.truncate_messages(sid, 6)
    assert await q.keys(store, sid) == ["k1"]
    # After a rewind the index counts from the rewound length: 2 + offset 1 = 3.
    await q.record(store, sid, "k2")
    await store.append_messages(
        sid, commit(user(), notice(), start_run=start("r1", rewind_to=2), **q.deliver(("k2", 1)))
    )
    assert await store.get_message_count(sid) == 4
    await store.truncate_messages(sid, 4)
    assert "k2" not in await q.keys(store, sid)
    await store.truncate_messages(sid, 3)
    assert "k2" in await q.keys(store, sid)


async def _truncate_reopens(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(user()))
    await q.record(store, sid, "k1", 1)
    await q.record(store, sid, "k2", 2)
    await store.append_messages(sid, commit(notice(), notice(), **q.deliver(("k1", 0), ("k2", 1))))
    await store.truncate_messages(sid, 2)
    assert await q.keys(store, sid) == ["k2"]
    await store.append_messages(sid, commit(notice(), **q.deliver(("k2", 0))))
    assert await q.keys(store, sid) == []
    # A rewind re-opens as well, and the item is deliverable in that same commit.
    await store.append_messages(
        sid, commit(notice(), start_run=start("r1", rewind_to=1), **q.deliver(("k1", 0)))
    )
    assert await q.keys(store, sid) == ["k2"]
    await store.append_messages(sid, commit(notice(), start_run=start("r2", rewind_to=1)))
    assert await q.keys(store, sid) == ["k1", "k2"]


async def _offset_outside_rows(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(user()))
    await q.record(store, sid, "k1")
    before = await snapshot(store, sid)
    for rows, offset in [((notice(),), 1), ((notice(), notice()), -1), ((), 0)]:
        with pytest.raises(ValidationError) as caught:
            await store.append_messages(sid, commit(*rows, **q.deliver(("k1", offset))))
        assert caught.value.code == "validation_error"
        assert caught.value.retryable is False
        assert await snapshot(store, sid) == before


async def _undeliverable(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session()).id
    await q.record(store, sid, "k1")
    await q.record(store, sid, "k2")
    await store.append_messages(sid, commit(notice(), **q.deliver(("k1", 0))))
    before = await snapshot(store, sid)
    attempts = [
        (("missing", 0),),
        (("k1", 0),),
        (("k2", 0), ("k2", 1)),
        (("k2", 0), ("missing", 1)),
    ]
    for pairs in attempts:
        with pytest.raises(_conflict(q)) as caught:
            await store.append_messages(
                sid, commit(notice(), notice(), expect_message_count=1, **q.deliver(*pairs))
            )
        assert caught.value.code == "state_concurrency_conflict"  # type: ignore[attr-defined]
        assert caught.value.retryable is True  # type: ignore[attr-defined]
        assert await snapshot(store, sid) == before


async def _clone_copies_none(store: SessionStateStore, q: Queue) -> None:
    sid = (await store.create_session(user_id="u1")).id
    await q.record(store, sid, "delivered")
    await q.record(store, sid, "queued")
    await store.append_messages(sid, commit(notice(), **q.deliver(("delivered", 0))))
    clone = await store.clone_session(sid)
    assert await q.keys(store, clone.id) == []
    with pytest.raises(_conflict(q)):
        await store.append_messages(clone.id, commit(notice(), **q.deliver(("queued", 0))))
    assert await q.record(store, clone.id, "delivered") is True
    assert await q.keys(store, sid) == ["queued"]


async def _deleted_with_session(store: SessionStateStore, q: Queue) -> None:
    await store.create_session("s1")
    await q.record(store, "s1", "k1")
    await q.record(store, "s1", "k2")
    await store.append_messages("s1", commit(notice(), **q.deliver(("k2", 0))))
    assert await store.delete_session("s1") is True
    await store.create_session("s1")
    assert await q.keys(store, "s1") == []
    assert await q.record(store, "s1", "k2") is True
    assert await q.keys(store, "s1") == ["k2"]


class QueueRules:
    """CI-1..CI-10 and LA-1..LA-10."""

    @rule("CI-1")
    async def test_CI_1_insert_once_per_key(self, store: SessionStateStore) -> None:
        await _insert_once(store, CONTEXT)

    @rule("CI-2")
    async def test_CI_2_missing_session(self, store: SessionStateStore) -> None:
        await _missing_session(store, CONTEXT)

    @rule("CI-3")
    async def test_CI_3_fenced_record_needs_live_run(self, store: SessionStateStore) -> None:
        await _fenced_record(store, CONTEXT)

    @rule("CI-4")
    async def test_CI_4_lists_undelivered_by_time_then_key(self, store: SessionStateStore) -> None:
        await _listing_order(store, CONTEXT)

    @rule("CI-5")
    async def test_CI_5_delivered_with_row_index(self, store: SessionStateStore) -> None:
        await _delivered_with_row_index(store, CONTEXT)

    @rule("CI-6")
    async def test_CI_6_truncate_and_rewind_reopen(self, store: SessionStateStore) -> None:
        await _truncate_reopens(store, CONTEXT)

    @rule("CI-7")
    async def test_CI_7_row_offset_outside_rows(self, store: SessionStateStore) -> None:
        await _offset_outside_rows(store, CONTEXT)

    @rule("CI-8")
    async def test_CI_8_undeliverable_item_refuses_commit(self, store: SessionStateStore) -> None:
        await _undeliverable(store, CONTEXT)

    @rule("CI-9")
    async def test_CI_9_clone_copies_no_item(self, store: SessionStateStore) -> None:
        await _clone_copies_none(store, CONTEXT)

    @rule("CI-10")
    async def test_CI_10_items_deleted_with_session(self, store: SessionStateStore) -> None:
        await _deleted_with_session(store, CONTEXT)

    @rule("LA-1")
    async def test_LA_1_insert_once_per_call_id(self, store: SessionStateStore) -> None:
        await _insert_once(store, LATE)

    @rule("LA-2")
    async def test_LA_2_missing_session(self, store: SessionStateStore) -> None:
        await _missing_session(store, LATE)

    @rule("LA-3")
    async def test_LA_3_fenced_record_needs_live_run(self, store: SessionStateStore) -> None:
        await _fenced_record(store, LATE)

    @rule("LA-4")
    async def test_LA_4_lists_undelivered_by_time_then_call_id(
        self, store: SessionStateStore
    ) -> None:
        await _listing_order(store, LATE)

    @rule("LA-5")
    async def test_LA_5_delivered_with_row_index(self, store: SessionStateStore) -> None:
        await _delivered_with_row_index(store, LATE)

    @rule("LA-6")
    async def test_LA_6_truncate_and_rewind_reopen(self, store: SessionStateStore) -> None:
        await _truncate_reopens(store, LATE)

    @rule("LA-7")
    async def test_LA_7_row_offset_outside_rows(self, store: SessionStateStore) -> None:
        await _offset_outside_rows(store, LATE)

    @rule("LA-8")
    async def test_LA_8_undeliverable_answer_refuses_commit(self, store: SessionStateStore) -> None:
        await _undeliverable(store, LATE)

    @rule("LA-9")
    async def test_LA_9_clone_copies_no_late_answer(self, store: SessionStateStore) -> None:
        await _clone_copies_none(store, LATE)

    @rule("LA-10")
    async def test_LA_10_late_answers_deleted_with_session(self, store: SessionStateStore) -> None:
        await _deleted_with_session(store, LATE)
