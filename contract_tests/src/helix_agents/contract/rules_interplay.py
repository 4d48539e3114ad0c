"""Rules met together: approvals beside log edits, commit ids beside cuts, faults in pairs."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    ValidationError,
)
from helix_agents.core.errors import (
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
)

from ._base import rule
from ._helpers import CONTEXT, LATE, approval, commit, item, late, notice, snapshot, start, user


class InterplayRules:
    """APR-5, IDEM-2 beside clears and cuts, CMT-1."""

    @rule("APR-5")
    async def test_APR_5_approvals_outlive_log_edits(self, store: SessionStateStore) -> None:
        sid = (await store.create_session(user_id="u-apr5")).id
        await store.append_messages(sid, commit(user("0"), user("1"), start_run=start("r1")))
        await store.add_pending_approvals(sid, [approval("a1", 2), approval("a2", 1)])
        await store.add_pending_approvals(sid, [approval("a3", 0)], fence_run_id="r1")
        assert await store.resolve_approval(sid, "a3") == "resolved"
        await store.append_messages(sid, commit(user("2"), user("3")))
        await store.truncate_messages(sid, 3)
        await store.pop_messages(sid, 2)
        await store.replace_messages(sid, 0, [user("x")], expect_message_count=1)
        await store.append_messages(sid, commit(user("y"), start_run=start("r2", rewind_to=0)))
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == ["a2", "a1"]
        assert await store.resolve_approval(sid, "a3") == "already-resolved"
        await store.add_pending_approvals(sid, [approval("a3", 0)])
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == ["a2", "a1"]
        [summary] = (await store.list_sessions("u-apr5")).sessions
        assert summary.pending_approvals == 2
        assert await store.resolve_approval(sid, "a1") == "resolved"
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == ["a2"]

    @rule("IDEM-2")
    async def test_IDEM_2_commit_ids_after_a_clear_and_a_cut_inside_a_commit(
        self, store: SessionStateStore
    ) -> None:
        sid = (await store.create_session()).id
        first = commit(user("a"), user("b"), commit_id="c1")
        assert (await store.append_messages(sid, first)).first_index == 0
        await store.clear_session(sid)
        again = await store.append_messages(sid, first)
        assert (again.first_index, again.message_count, again.replayed) == (0, 2, False)
        # c2 writes rows 2..4; cutting to 4 (inside it) forgets c2, and only c2.
        three = commit(user("c"), user("d"), user("e"), commit_id="c2")
        assert (await store.append_messages(sid, three)).first_index == 2
        await store.truncate_messages(sid, 5)
        assert (await store.append_messages(sid, three)).replayed is True
        await store.truncate_messages(sid, 4)
        assert (await store.append_messages(sid, first)).replayed is True
        landed = await store.append_messages(sid, three)
        assert (landed.first_index, landed.message_count, landed.replayed) == (4, 7, False)
        # A pop that takes one row of a commit forgets it too.
        await store.pop_messages(sid)
        relanded = await store.append_messages(sid, three)
        assert (relanded.first_index, relanded.replayed) == (6, False)
        assert [r.content for r in await store.get_messages(sid)] == list("abcdcdcde")

    @rule("CMT-1")
    async def test_CMT_1_two_faults_at_once_the_first_check_wins(
        self, store: SessionStateStore
    ) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        await store.append_messages(sid, commit(notice(), commit_id="done"))
        await store.record_context_item(sid, item("k1"))
        await store.record_late_answer(sid, late("call-1"))
        stale = {"expect_message_count": 99}
        fenced = {"fence_run_id": "r0"}
        bad_offset = CONTEXT.deliver(("k1", 3))
        missing_item = CONTEXT.deliver(("missing", 0))
        missing_answer = LATE.deliver(("missing", 0))
        cases: list[tuple[str, dict[str, Any], type[StateStoreError]]] = [
            ("missing", {**bad_offset, **fenced}, SessionNotFoundError),
            (sid, {**bad_offset, **fenced, **stale}, ValidationError),
            (sid, {"start_run": start("r1"), **missing_item}, ValidationError),
            (sid, {"start_run": start("r2", rewind_to=9), **missing_item}, ValidationError),
            (sid, {**fenced, **stale}, RunSupersededError),
            (sid, {**fenced, **missing_item}, RunSupersededError),
            (sid, {**stale, **missing_item}, MessageCountConflictError),
            (sid, {**stale, **missing_answer}, MessageCountConflictError),
        ]
        before = await snapshot(store, sid)
        for target, fields, error in cases:
            with pytest.raises(error):
                await store.append_messages(target, commit(notice(), **fields))
            assert await snapshot(store, sid) == before, (fields, error)
        await store.finish_run(sid, "r1", "completed")
        before = await snapshot(store, sid)
        with pytest.raises(RunSupersededError):
            await store.append_messages(
                sid, commit(notice(), fence_run_id="r1", expect_message_count=99)
            )
        both = {**CONTEXT.deliver(("missing", 0)), **LATE.deliver(("missing", 0))}
        with pytest.raises((ContextItemDeliveryConflictError, LateAnswerDeliveryConflictError)):
            await store.append_messages(sid, commit(notice(), **both))
        assert await snapshot(store, sid) == before
        # A landed commit id replays before any other check but the session's existence.
        replay = await store.append_messages(
            sid, commit(user(), commit_id="done", **bad_offset, **fenced, **stale)
        )
        assert (replay.first_index, replay.message_count, replay.replayed) == (1, 2, True)
        assert await snapshot(store, sid) == before
