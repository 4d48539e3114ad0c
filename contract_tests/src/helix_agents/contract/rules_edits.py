"""MSG-7..MSG-11: popping the newest rows and replacing a suffix, alone and racing writers."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from typing import Any

import pytest

from helix_agents.core import (
    Message,
    MessageCountConflictError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.errors import is_message_count_conflict

from ._base import StoreFactory, rule
from ._helpers import (
    CONTEXT,
    LATE,
    assistant,
    checkpoint,
    commit,
    notice,
    snapshot,
    user,
)

RACE_ROUNDS = 60
"""Rounds of each race: enough to land both orders many times, fast on every backend."""


async def _session_with_deliveries(store: SessionStateStore) -> tuple[str, list[Message]]:
    """Rows 0..4; row 3 delivered item ``k1``, row 4 late answer ``call-1``; checkpoints."""
    sid = (await store.create_session()).id
    rows: list[Message] = [user("0"), assistant("1"), user("2"), notice("3"), notice("4")]
    await store.append_messages(sid, commit(*rows[:3]))
    await CONTEXT.record(store, sid, "k1")
    await LATE.record(store, sid, "call-1")
    await store.append_messages(
        sid,
        commit(*rows[3:], **CONTEXT.deliver(("k1", 0)), **LATE.deliver(("call-1", 1))),
    )
    for cp, count in (("c2", 2), ("c3", 3), ("c5", 5)):
        await store.save_checkpoint(sid, checkpoint(cp, count))
    return sid, rows


def _lost_or_doubled(added: list[Message], final: list[Message], popped: list[Message]) -> str:
    """Empty when ``final`` and ``popped`` hold each added row exactly once, else what differs."""
    have = Counter(m.model_dump_json() for m in final + popped)
    want = Counter(m.model_dump_json() for m in added)
    return "" if have == want else f"lost {want - have}, extra {have - want}"


class EditRules:
    """MSG-7..MSG-11."""

    @rule("MSG-7")
    async def test_MSG_7_pop_bounds_and_effects(self, store: SessionStateStore) -> None:
        for count in (1, 0):
            with pytest.raises(SessionNotFoundError):
                await store.pop_messages("no-such-session", count)
        sid, rows = await _session_with_deliveries(store)
        await store.append_messages(sid, commit(user("5"), commit_id="c-5"))
        rows.append(user("5"))
        before = await snapshot(store, sid)
        for bad in (0, -1, 501, True, "1"):
            with pytest.raises(ValidationError):
                await store.pop_messages(sid, bad)  # type: ignore[arg-type]
        assert await snapshot(store, sid) == before

        assert await store.pop_messages(sid) == [user("5")]
        assert await store.get_messages(sid) == rows[:5]
        assert not (await store.append_messages(sid, commit(user("5"), commit_id="c-5"))).replayed
        assert await store.pop_messages(sid, 3) == rows[3:6]
        assert await store.get_messages(sid) == rows[:3]
        assert await store.get_message_count(sid) == 3
        assert await store.get_ui_message_count(sid) == 3
        assert [c.checkpoint_id for c in await store.list_checkpoints(sid)] == ["c2", "c3"]
        assert await CONTEXT.keys(store, sid) == ["k1"]
        assert await LATE.keys(store, sid) == ["call-1"]
        result = await store.append_messages(sid, commit(user("new")))
        assert result.first_index == 3

        assert await store.pop_messages(sid, 500) == [*rows[:3], user("new")]
        assert await store.get_messages(sid) == [] and await store.list_checkpoints(sid) == []
        before = await snapshot(store, sid)
        assert await store.pop_messages(sid) == []
        assert await store.pop_messages(sid, 7) == []
        assert await snapshot(store, sid) == before

    @rule("MSG-8")
    async def test_MSG_8_replace_order_of_checks_and_effects(
        self, store: SessionStateStore
    ) -> None:
        with pytest.raises(SessionNotFoundError):
            await store.replace_messages("no-such-session", 0, [], expect_message_count=0)
        with pytest.raises(SessionNotFoundError):
            await store.replace_messages("no-such-session", 5, [], expect_message_count=0)
        sid, rows = await _session_with_deliveries(store)
        await store.append_messages(sid, commit(user("5"), commit_id="c-5"))
        await store.append_messages(sid, commit(user("6"), commit_id="c-6"))
        rows += [user("5"), user("6")]
        before = await snapshot(store, sid)
        malformed: list[dict[str, Any]] = [
            {"keep": -1, "messages": [], "expect_message_count": 7},
            {"keep": 8, "messages": [], "expect_message_count": 7},
            # keep is judged against the caller's count, even when the log has more rows.
            {"keep": 5, "messages": [], "expect_message_count": 4},
            {"keep": 0, "messages": [], "expect_message_count": -1},
            {"keep": 5, "messages": [{"role": "robot", "content": "x"}], "expect_message_count": 7},
            {"keep": 5, "messages": [user(), {"role": "context"}], "expect_message_count": 7},
            {"keep": 5, "messages": "not rows", "expect_message_count": 7},
            # An iterator of good rows is not a sequence of rows (docs/limits.md).
            {"keep": 5, "messages": iter([user("x")]), "expect_message_count": 7},
            # Malformed beats a stale count; a count is 0..2^62 (docs/limits.md).
            {"keep": 9, "messages": [], "expect_message_count": 3},
            {"keep": 0, "messages": [], "expect_message_count": 2**62 + 1},
        ]
        for call in malformed:
            with pytest.raises(ValidationError):
                await store.replace_messages(sid, **call)
        assert await snapshot(store, sid) == before
        for stale in (0, 6, 8, 100, 2**62):
            with pytest.raises(MessageCountConflictError) as caught:
                await store.replace_messages(sid, 0, [user("x")], expect_message_count=stale)
            assert is_message_count_conflict(caught.value) and caught.value.retryable
        assert await snapshot(store, sid) == before

        summary = assistant("summary of 3..6")
        result = await store.replace_messages(
            sid, 3, [summary, user("next")], expect_message_count=7
        )
        assert (result.first_index, result.message_count, result.replayed) == (3, 5, False)
        assert await store.get_messages(sid) == [*rows[:3], summary, user("next")]
        assert await store.get_message_count(sid) == 5
        assert await store.get_ui_message_count(sid) == 5
        assert [c.checkpoint_id for c in await store.list_checkpoints(sid)] == ["c2", "c3"]
        assert await CONTEXT.keys(store, sid) == ["k1"]
        assert await LATE.keys(store, sid) == ["call-1"]
        assert not (await store.append_messages(sid, commit(user("5"), commit_id="c-5"))).replayed
        # keep == count appends; no rows cuts; both are writes.
        same = await store.replace_messages(sid, 6, [user("7")], expect_message_count=6)
        assert (same.first_index, same.message_count) == (6, 7)
        cut = await store.replace_messages(sid, 2, [], expect_message_count=7)
        assert (cut.first_index, cut.message_count) == (2, 2)
        assert await store.get_messages(sid) == rows[:2]
        again = await store.replace_messages(sid, 0, [notice("n")], expect_message_count=2)
        assert (again.first_index, again.message_count) == (0, 1)
        assert await store.get_messages(sid) == [notice("n")]
        assert await store.get_ui_message_count(sid) == 0

    @rule("MSG-9", requires="shared_instances")
    async def test_MSG_9_pop_is_atomic_beside_writers(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            counter = itertools.count()
            added: list[Message] = [user(f"seed {next(counter)}") for _ in range(4)]
            await a.append_messages(sid, commit(*added))
            popped: list[Message] = []
            for round_ in range(RACE_ROUNDS):
                fresh = [user(f"row {next(counter)}") for _ in range(3)]
                added += fresh
                # Pops beside appends and beside each other, through both instances.
                outcomes = await asyncio.gather(
                    a.pop_messages(sid, 1 + round_ % 2),
                    b.append_messages(sid, commit(fresh[0])),
                    b.pop_messages(sid),
                    a.append_messages(sid, commit(fresh[1], fresh[2])),
                    return_exceptions=True,
                )
                for outcome in outcomes:
                    assert not isinstance(outcome, BaseException), outcomes
                    if isinstance(outcome, list):
                        popped += outcome
                final = await b.get_messages(sid)
                problem = _lost_or_doubled(added, final, popped)
                assert not problem, f"round {round_}: {problem}; outcomes {outcomes}"
                assert await a.get_message_count(sid) == len(final)

    @rule("MSG-10", requires="shared_instances")
    async def test_MSG_10_replace_is_atomic_beside_writers(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            await a.append_messages(sid, commit(user("seed 0"), user("seed 1")))
            for round_ in range(RACE_ROUNDS):
                log = await a.get_messages(sid)
                n = len(log)
                summary, row = assistant(f"summary {round_}"), user(f"row {round_}")
                replaced, appended = await asyncio.gather(
                    a.replace_messages(sid, n - 1, [summary], expect_message_count=n),
                    b.append_messages(sid, commit(row)),
                    return_exceptions=True,
                )
                assert not isinstance(appended, BaseException), appended
                final = await b.get_messages(sid)
                if isinstance(replaced, BaseException):
                    assert is_message_count_conflict(replaced), replaced
                    assert final == [*log, row]
                else:
                    assert (replaced.first_index, replaced.message_count) == (n - 1, n)
                    assert final == [*log[:-1], summary, row]
            # Two replaces made from one read, each changing the length: exactly one lands.
            for round_ in range(RACE_ROUNDS // 4):
                log = await a.get_messages(sid)
                n = len(log)
                mine = [assistant(f"mine {round_}"), user("m")]
                theirs = [assistant(f"theirs {round_}"), user("t"), user("t")]
                outcomes = await asyncio.gather(
                    a.replace_messages(sid, n - 1, mine, expect_message_count=n),
                    b.replace_messages(sid, n - 1, theirs, expect_message_count=n),
                    return_exceptions=True,
                )
                refused = [o for o in outcomes if isinstance(o, BaseException)]
                assert len(refused) == 1 and is_message_count_conflict(refused[0]), outcomes
                winner = theirs if isinstance(outcomes[0], BaseException) else mine
                assert await b.get_messages(sid) == [*log[:-1], *winner]

    @rule("MSG-11", requires="retention")
    async def test_MSG_11_pop_and_replace_under_retention(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory(max_messages=3) as store:
            sid = (await store.create_session()).id
            rows = [user(str(i)) for i in range(6)]
            await store.append_messages(sid, commit(*rows))
            assert await store.is_truncated(sid)
            assert await store.pop_messages(sid, 5) == rows[3:]
            assert await store.get_message_count(sid) == 3
            before = await snapshot(store, sid)
            assert await store.pop_messages(sid) == []
            assert await snapshot(store, sid) == before
            with pytest.raises(ValidationError):
                await store.replace_messages(sid, 2, [user("x")], expect_message_count=3)
            assert await snapshot(store, sid) == before
            result = await store.replace_messages(
                sid, 3, [user(f"n{i}") for i in range(4)], expect_message_count=3
            )
            assert (result.first_index, result.message_count) == (3, 7)
            assert await store.get_messages(sid) == [user("n1"), user("n2"), user("n3")]
            assert await store.pop_messages(sid, 2) == [user("n2"), user("n3")]
            result = await store.replace_messages(sid, 4, [user("y")], expect_message_count=5)
            assert (result.first_index, result.message_count) == (4, 5)
            assert await store.get_messages(sid) == [user("y")]
            assert await store.get_ui_message_count(sid) == 5
