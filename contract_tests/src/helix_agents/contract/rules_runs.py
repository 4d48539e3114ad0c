"""RUN: run starts, fences, run ids, finishing, and racing starts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from helix_agents.core import (
    RunSupersededError,
    SessionStateStore,
    ValidationError,
)

from ._base import StoreFactory, rule
from ._helpers import (
    CONTEXT,
    LATE,
    approval,
    checkpoint,
    commit,
    snapshot,
    start,
    user,
)


def _fenced_writes(sid: str, run_id: str) -> list[Callable[[SessionStateStore], Awaitable[object]]]:
    return [
        lambda s: s.append_messages(sid, commit(user(), fence_run_id=run_id)),
        lambda s: s.truncate_messages(sid, 0, fence_run_id=run_id),
        lambda s: s.pop_messages(sid, fence_run_id=run_id),
        lambda s: s.replace_messages(sid, 0, [user()], expect_message_count=0, fence_run_id=run_id),
        lambda s: CONTEXT.record(s, sid, "k-fenced", fence_run_id=run_id),
        lambda s: LATE.record(s, sid, "call-fenced", fence_run_id=run_id),
        lambda s: s.add_pending_approvals(sid, [approval("a-fenced")], fence_run_id=run_id),
        lambda s: s.save_checkpoint(sid, checkpoint("c-fenced", 0), fence_run_id=run_id),
    ]


class RunRules:
    """RUN-1..RUN-5."""

    @rule("RUN-1")
    async def test_RUN_1_start_makes_run_current_with_rows(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        result = await store.append_messages(sid, commit(user(), user(), start_run=start("r1")))
        info = await store.get_session(sid)
        assert info is not None and info.current_run is not None
        assert (info.current_run.run_id, info.current_run.status) == ("r1", "live")
        assert info.current_run.ended_at is None and info.message_count == 2
        assert result.message_count == 2
        before = await snapshot(store, sid)
        with pytest.raises(ValidationError):
            await store.append_messages(sid, commit(user(), start_run=start("r2", rewind_to=3)))
        with pytest.raises(ValidationError):
            await store.append_messages(
                sid, commit(user(), start_run=start("r2"), fence_run_id="r1")
            )
        assert await snapshot(store, sid) == before
        await store.append_messages(sid, commit(user(), fence_run_id="r1"))
        await store.append_messages(sid, commit(user("again"), start_run=start("r2", rewind_to=1)))
        info = await store.get_session(sid)
        assert info is not None and info.current_run is not None
        assert info.current_run.run_id == "r2" and info.message_count == 2
        assert (await store.get_messages(sid))[1] == user("again")

    @rule("RUN-2")
    async def test_RUN_2_stale_run_writes_refused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        await store.add_pending_approvals(sid, [approval("a1")])
        for write in _fenced_writes(sid, "r1"):
            await write(store)  # all land while r1 is live
        await store.append_messages(sid, commit(user(), start_run=start("r2")))
        await store.append_messages(sid, commit(user(), user(), fence_run_id="r2"))
        for stale in ("r1", "never-started"):
            before = await snapshot(store, sid)
            for write in _fenced_writes(sid, stale):
                with pytest.raises(RunSupersededError) as caught:
                    await write(store)
                assert caught.value.code == "state_run_superseded"
                assert not caught.value.retryable
                assert await snapshot(store, sid) == before
        await store.finish_run(sid, "r2", "completed")
        before = await snapshot(store, sid)
        for write in _fenced_writes(sid, "r2"):
            with pytest.raises(RunSupersededError):
                await write(store)
        assert await snapshot(store, sid) == before

    @rule("RUN-3")
    async def test_RUN_3_run_ids_never_reused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        await store.finish_run(sid, "r1", "completed")
        await store.append_messages(sid, commit(user(), start_run=start("r2")))
        for reused in ("r1", "r2"):
            before = await snapshot(store, sid)
            with pytest.raises(ValidationError):
                await store.append_messages(sid, commit(user(), start_run=start(reused)))
            assert await snapshot(store, sid) == before
        await store.clear_session(sid)
        with pytest.raises(ValidationError):
            await store.append_messages(sid, commit(user(), start_run=start("r1")))
        await store.append_messages(sid, commit(user(), start_run=start("r3")))

    @rule("RUN-4")
    async def test_RUN_4_finish_needs_current_live_run(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        with pytest.raises(RunSupersededError):
            await store.finish_run(sid, "r1", "completed")
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        before = await snapshot(store, sid)
        with pytest.raises(ValidationError):
            await store.finish_run(sid, "r1", "live")
        assert await snapshot(store, sid) == before
        await store.append_messages(sid, commit(user(), start_run=start("r2")))
        before = await snapshot(store, sid)
        with pytest.raises(RunSupersededError):
            await store.finish_run(sid, "r1", "failed")
        assert await snapshot(store, sid) == before
        await store.finish_run(sid, "r2", "awaiting_approval")
        info = await store.get_session(sid)
        assert info is not None and info.current_run is not None
        assert info.current_run.status == "awaiting_approval"
        assert info.current_run.ended_at is not None
        before = await snapshot(store, sid)
        with pytest.raises(RunSupersededError):
            await store.finish_run(sid, "r2", "completed")
        assert await snapshot(store, sid) == before

    @rule("RUN-5", requires="shared_instances")
    async def test_RUN_5_racing_starts_later_one_wins(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            await a.append_messages(sid, commit(user()))
            for round_ in range(3):
                count = await a.get_message_count(sid)
                runs = (f"a{round_}", f"b{round_}")
                outcomes = await asyncio.gather(
                    a.append_messages(
                        sid, commit(user(), start_run=start(runs[0]), expect_message_count=count)
                    ),
                    b.append_messages(
                        sid, commit(user(), start_run=start(runs[1]), expect_message_count=count)
                    ),
                )
                info = await b.get_session(sid)
                assert info is not None and info.current_run is not None
                winner = info.current_run.run_id
                assert winner in runs and info.current_run.status == "live"
                loser = runs[1] if winner == runs[0] else runs[0]
                later = max(range(2), key=lambda i: outcomes[i].first_index)
                assert runs[later] == winner
                assert outcomes[later].message_count == info.message_count
                before = await snapshot(a, sid)
                for write in _fenced_writes(sid, loser):
                    with pytest.raises(RunSupersededError):
                        await write(a)
                assert await snapshot(a, sid) == before
                await b.append_messages(sid, commit(user(), fence_run_id=winner))
