"""EMC and IDEM: the expected-count check and idempotent commits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    SessionNotFoundError,
    SessionStateStore,
    deliver_late_answer_notices,
    is_retryable,
)
from helix_agents.core.errors import is_message_count_conflict

from ._base import StoreFactory, rule
from ._helpers import assistant, checkpoint, commit, late, notice, snapshot, start, user


class _MovesLogOnRead:
    """A store seen through a runtime helper, with another writer landing between its reads."""

    def __init__(self, store: SessionStateStore, other: SessionStateStore) -> None:
        self._store = store
        self._other = other

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def list_undelivered_late_answers(self, session_id: str) -> Any:
        answers = await self._store.list_undelivered_late_answers(session_id)
        await self._other.append_messages(session_id, commit(user("meanwhile")))
        return answers


class CommitRules:
    """EMC-1..EMC-5 and IDEM-1..IDEM-3."""

    @rule("EMC-1")
    async def test_EMC_1_stale_expected_count_refused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), expect_message_count=0))
        before = await snapshot(store, sid)
        for expected in (0, 2, 5):
            with pytest.raises(MessageCountConflictError) as caught:
                await store.append_messages(sid, commit(user(), expect_message_count=expected))
            assert is_message_count_conflict(caught.value)
            assert is_retryable(caught.value)
            assert caught.value.code == "state_concurrency_conflict"
            assert await snapshot(store, sid) == before
        result = await store.append_messages(sid, commit(user(), expect_message_count=1))
        assert (result.first_index, result.message_count) == (1, 2)

    @rule("EMC-2", requires="shared_instances")
    async def test_EMC_2_check_is_atomic_with_write(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            for round_ in range(5):
                count = await a.get_message_count(sid)
                outcomes = await asyncio.gather(
                    *(
                        s.append_messages(
                            sid,
                            commit(
                                user(f"{round_}-{i}"),
                                assistant(f"answer {i}"),
                                expect_message_count=count,
                            ),
                        )
                        for i, s in enumerate((a, b, a, b))
                    ),
                    return_exceptions=True,
                )
                landed = [o for o in outcomes if not isinstance(o, BaseException)]
                refused = [o for o in outcomes if isinstance(o, BaseException)]
                assert len(landed) == 1, outcomes
                assert all(is_message_count_conflict(e) for e in refused), outcomes
                assert await b.get_message_count(sid) == count + 2
                assert len(await a.get_messages(sid)) == count + 2

    @rule("EMC-5", requires="shared_instances")
    async def test_EMC_5_no_write_lands_on_a_view_another_instance_moved(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session("emc-5")).id
            await a.append_messages(sid, commit(user(), user(), expect_message_count=0))
            await b.append_messages(sid, commit(user(), expect_message_count=2))
            with pytest.raises(MessageCountConflictError):
                await a.append_messages(sid, commit(user(), expect_message_count=2))
            await a.append_messages(sid, commit(user("a"), expect_message_count=3))
            await b.truncate_messages(sid, 1)
            await a.append_messages(sid, commit(user("after cut"), expect_message_count=1))
            assert [m.content for m in await b.get_messages(sid)][-1] == "after cut"
            # The same id, deleted and created again, is another session: a view of the
            # first (two rows) never passes for the second, which has none.
            await a.append_messages(sid, commit(user(), expect_message_count=2))
            assert await b.delete_session(sid)
            await b.create_session(sid)
            await b.append_messages(sid, commit(user(), user(), user(), expect_message_count=0))
            await b.truncate_messages(sid, 2)
            await b.append_messages(sid, commit(user(), expect_message_count=2))
            with pytest.raises(MessageCountConflictError):
                await a.append_messages(sid, commit(user(), expect_message_count=4))
            assert await a.get_message_count(sid) == 3
            await b.delete_session(sid)
            with pytest.raises(SessionNotFoundError):
                await a.append_messages(sid, commit(user(), expect_message_count=3))

    @rule("EMC-3")
    async def test_EMC_3_run_start_ignores_expected_count(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), user()))
        result = await store.append_messages(
            sid, commit(user(), start_run=start("r1"), expect_message_count=99)
        )
        assert (result.first_index, result.message_count) == (2, 3)
        result = await store.append_messages(
            sid, commit(user(), start_run=start("r2", rewind_to=1), expect_message_count=0)
        )
        assert (result.first_index, result.message_count) == (1, 2)

    @rule("EMC-4", requires="shared_instances")
    async def test_EMC_4_context_rows_count(self, store_factory: StoreFactory) -> None:
        async with store_factory() as store, store_factory() as other:
            sid = (await store.create_session()).id
            await store.append_messages(sid, commit(user(), notice(), user(), notice()))
            assert await store.get_message_count(sid) == 4
            assert await store.get_ui_message_count(sid) == 2
            assert (await store.save_checkpoint(sid, checkpoint("c4", 4))).recorded
            await store.record_late_answer(sid, late("call-1"))

            moved = _MovesLogOnRead(store, other)
            assert await deliver_late_answer_notices(moved, sid) == []
            assert [a.call_id for a in await store.list_undelivered_late_answers(sid)] == ["call-1"]
            assert await store.get_message_count(sid) == 5

            rows = await deliver_late_answer_notices(store, sid)
            assert len(rows) == 1 and rows[0].role == "context"
            assert await store.list_undelivered_late_answers(sid) == []
            assert (await store.get_messages(sid, limit=1)) == rows
            assert await store.get_message_count(sid) == 6
            assert await store.get_ui_message_count(sid) == 3

    @rule("IDEM-1")
    async def test_IDEM_1_retry_after_landing_replays(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        first = await store.append_messages(
            sid, commit(user("a"), expect_message_count=0, commit_id="c-1")
        )
        assert not first.replayed
        await store.append_messages(sid, commit(user("b")))
        before = await snapshot(store, sid)
        again = await store.append_messages(
            sid, commit(user("a"), expect_message_count=0, commit_id="c-1")
        )
        assert again.replayed
        assert (again.first_index, again.message_count) == (first.first_index, first.message_count)
        assert await snapshot(store, sid) == before

    @rule("IDEM-2")
    async def test_IDEM_2_truncate_or_rewind_forgets_commit(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user("a"), commit_id="c-a"))
        await store.append_messages(sid, commit(user("b"), commit_id="c-b"))
        await store.truncate_messages(sid, 1)
        kept = await store.append_messages(sid, commit(user("a"), commit_id="c-a"))
        assert kept.replayed and kept.first_index == 0
        relanded = await store.append_messages(sid, commit(user("b"), commit_id="c-b"))
        assert not relanded.replayed and relanded.first_index == 1
        await store.append_messages(sid, commit(user("x"), start_run=start("r1", rewind_to=0)))
        again = await store.append_messages(sid, commit(user("a"), commit_id="c-a"))
        assert not again.replayed and again.first_index == 1
        assert await store.get_message_count(sid) == 2
        # A commit of no rows is forgotten once the log it landed on is cut.
        empty = await store.append_messages(sid, commit(commit_id="c-empty"))
        assert (empty.first_index, empty.message_count) == (2, 2)
        await store.truncate_messages(sid, 2)
        assert (await store.append_messages(sid, commit(commit_id="c-empty"))).replayed
        await store.truncate_messages(sid, 1)
        assert not (await store.append_messages(sid, commit(commit_id="c-empty"))).replayed

    @rule("IDEM-3", requires="shared_instances")
    async def test_IDEM_3_concurrent_sends_land_once(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            for round_ in range(5):
                count = await a.get_message_count(sid)
                same = commit(
                    user(f"turn {round_}"),
                    notice(),
                    expect_message_count=count,
                    commit_id=f"turn-{round_}",
                )
                results = await asyncio.gather(
                    *(s.append_messages(sid, same) for s in (a, b, a, b)),
                    return_exceptions=True,
                )
                errors = [r for r in results if isinstance(r, BaseException)]
                assert not errors, errors
                fresh = [r for r in results if not isinstance(r, BaseException) and not r.replayed]
                assert len(fresh) == 1, results
                assert {
                    (r.first_index, r.message_count)
                    for r in results
                    if not isinstance(r, BaseException)
                } == {(count, count + 2)}
                assert await b.get_message_count(sid) == count + 2
