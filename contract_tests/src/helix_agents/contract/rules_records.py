"""APR, CKP and ERR: approvals, checkpoints, and the shape of every refusal."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Awaitable, Callable

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.errors import ApprovalNotFoundError, lookup

from ._base import StoreFactory, rule
from ._helpers import approval, checkpoint, commit, snapshot, start, user


class RecordRules:
    """APR-1..APR-4, CKP-1..CKP-2, ERR-1..ERR-2."""

    @rule("APR-1")
    async def test_APR_1_add_once_and_list_in_order(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.add_pending_approvals(sid, [approval("b", 2), approval("c", 1)])
        await store.add_pending_approvals(sid, [approval("a", 2), approval("b", 0, tool="other")])
        listed = await store.list_pending_approvals(sid)
        assert [a.approval_id for a in listed] == ["c", "a", "b"]
        assert listed[2] == approval("b", 2)
        assert await store.resolve_approval(sid, "c") == "resolved"
        await store.add_pending_approvals(sid, [approval("c", 1)])
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == ["a", "b"]
        # Only ids already pending or resolved: nothing is written, activity included.
        before = await snapshot(store, sid)
        await store.add_pending_approvals(sid, [approval("a", 2), approval("c", 1)])
        assert await snapshot(store, sid) == before
        with pytest.raises(SessionNotFoundError):
            await store.add_pending_approvals("missing", [approval("x")])

    @rule("APR-2", requires="shared_instances")
    async def test_APR_2_resolved_exactly_once(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            await a.add_pending_approvals(sid, [approval(f"ap{i}") for i in range(3)])
            for i in range(3):
                answers = await asyncio.gather(
                    *(s.resolve_approval(sid, f"ap{i}") for s in (a, b) * 4)
                )
                assert sorted(answers) == ["already-resolved"] * 7 + ["resolved"]
            assert await b.list_pending_approvals(sid) == []

    @rule("APR-3")
    async def test_APR_3_unknown_approval(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.add_pending_approvals(sid, [approval("a1")])
        before = await snapshot(store, sid)
        with pytest.raises(ApprovalNotFoundError) as caught:
            await store.resolve_approval(sid, "nope")
        assert caught.value.code == "state_approval_not_found"
        assert not caught.value.retryable
        assert await snapshot(store, sid) == before
        with pytest.raises(SessionNotFoundError):
            await store.resolve_approval("missing", "a1")

    @rule("APR-4")
    async def test_APR_4_summary_counts_pending(self, store: SessionStateStore) -> None:
        sid = (await store.create_session(user_id="u1")).id

        async def pending() -> int:
            [summary] = (await store.list_sessions("u1")).sessions
            return summary.pending_approvals

        assert await pending() == 0
        await store.add_pending_approvals(sid, [approval("a1"), approval("a2")])
        assert await pending() == 2
        await store.add_pending_approvals(sid, [approval("a2"), approval("a3")])
        assert await pending() == 3
        await store.resolve_approval(sid, "a2")
        await store.resolve_approval(sid, "a2")
        assert await pending() == 2
        await store.clear_session(sid)
        assert await pending() == 0

    @rule("CKP-1")
    async def test_CKP_1_insert_once_get_list_latest(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        assert await store.latest_checkpoint(sid) is None
        await store.append_messages(sid, commit(user(), user(), user()))
        saved = [
            checkpoint("c3-old", 3, 1),
            checkpoint("c1", 1, 5),
            checkpoint("c3-new", 3, 2),
            checkpoint("c0", 0, 9),
        ]
        for cp in saved:
            assert (await store.save_checkpoint(sid, cp)).recorded
        assert not (await store.save_checkpoint(sid, checkpoint("c1", 2, 7, state="x"))).recorded
        assert await store.get_checkpoint(sid, "c1") == saved[1]
        assert await store.get_checkpoint(sid, "nope") is None
        assert [c.checkpoint_id for c in await store.list_checkpoints(sid)] == [
            "c0",
            "c1",
            "c3-old",
            "c3-new",
        ]
        assert await store.latest_checkpoint(sid) == saved[2]

    @rule("CKP-2")
    async def test_CKP_2_count_above_session_refused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), user()))
        before = await snapshot(store, sid)
        with pytest.raises(ValidationError) as caught:
            await store.save_checkpoint(sid, checkpoint("c3", 3))
        assert caught.value.code == "validation_error"
        assert await snapshot(store, sid) == before
        assert (await store.save_checkpoint(sid, checkpoint("c2", 2))).recorded

    @rule("ERR-1")
    async def test_ERR_1_refusals_carry_code_and_retryable(self, store: SessionStateStore) -> None:
        sid = (await store.create_session("s-err")).id
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        refusals: dict[type[StateStoreError], Callable[[], Awaitable[object]]] = {
            SessionNotFoundError: lambda: store.get_messages("missing"),
            SessionExistsError: lambda: store.create_session(sid),
            ValidationError: lambda: store.truncate_messages(sid, 99),
            RunSupersededError: lambda: store.append_messages(
                sid, commit(user(), fence_run_id="r0")
            ),
            MessageCountConflictError: lambda: store.append_messages(
                sid, commit(user(), expect_message_count=7)
            ),
            ApprovalNotFoundError: lambda: store.resolve_approval(sid, "nope"),
        }
        expected_codes = {
            SessionNotFoundError: ("state_session_not_found", False),
            SessionExistsError: ("state_session_exists", False),
            ValidationError: ("validation_error", False),
            RunSupersededError: ("state_run_superseded", False),
            MessageCountConflictError: ("state_concurrency_conflict", True),
            ApprovalNotFoundError: ("state_approval_not_found", False),
        }
        for cls, call in refusals.items():
            with pytest.raises(cls) as caught:
                await call()
            err = caught.value
            assert isinstance(err, StateStoreError)
            assert (err.code, err.retryable) == expected_codes[cls]
            assert issubclass(lookup(err.code), StateStoreError)
            assert isinstance(err, lookup(err.code))
            assert err.session_id in (sid, "missing")
            assert (err.session_id or "") in str(err)
            copy = pickle.loads(pickle.dumps(err))
            assert (type(copy), copy.code, str(copy)) == (type(err), err.code, str(err))
        assert StoreUnavailableError.code == "state_unavailable" and StoreUnavailableError.retryable

    @rule("ERR-2")
    async def test_ERR_2_lost_connection_is_store_unavailable(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as keeper:
            sid = (await keeper.create_session()).id
            await keeper.append_messages(sid, commit(user()))
            lost = store_factory()
            async with lost:
                await lost.get_message_count(sid)
            # The closed store has lost its connections: every call must say so, typed.
            calls: list[Callable[[], Awaitable[object]]] = [
                lambda: lost.append_messages(sid, commit(user(), user(), expect_message_count=1)),
                lambda: lost.get_messages(sid),
                lambda: lost.get_session(sid),
                lambda: lost.create_session(),
            ]
            for call in calls:
                with pytest.raises(StoreUnavailableError) as caught:
                    await call()
                assert caught.value.code == "state_unavailable" and caught.value.retryable
            assert await keeper.get_messages(sid) == [user()]
            assert await keeper.get_message_count(sid) == 1
