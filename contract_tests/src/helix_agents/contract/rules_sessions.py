"""SES: creating, reading, deleting, clearing, cloning and listing sessions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from helix_agents.core import (
    JsonObject,
    Message,
    MessageCountConflictError,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.errors import ApprovalNotFoundError

from ._base import StoreFactory, rule
from ._helpers import (
    CONTEXT,
    LATE,
    approval,
    assert_gone,
    checkpoint,
    commit,
    item,
    late,
    notice,
    snapshot,
    start,
    user,
)


async def _populate(store: SessionStateStore, sid: str) -> None:
    """Give a session something of every kind it can hold."""
    await store.append_messages(sid, commit(user(), notice(), start_run=start("r1")))
    await store.record_context_item(sid, item("k1"))
    await store.record_late_answer(sid, late("call-1"))
    await store.add_pending_approvals(sid, [approval("a1")])
    await store.save_checkpoint(sid, checkpoint("c1", 2))


def _writes(sid: str) -> list[Callable[[SessionStateStore], Awaitable[object]]]:
    """One call of every write of the protocol on ``sid``."""
    return [
        lambda s: s.append_messages(sid, commit(user())),
        lambda s: s.append_messages(sid, commit(user(), start_run=start("r9"))),
        lambda s: s.truncate_messages(sid, 0),
        lambda s: s.pop_messages(sid),
        lambda s: s.replace_messages(sid, 1, [user()], expect_message_count=2),
        lambda s: s.clear_session(sid),
        lambda s: s.finish_run(sid, "r1", "completed"),
        lambda s: s.record_context_item(sid, item("k9")),
        lambda s: s.record_late_answer(sid, late("call-9")),
        lambda s: s.add_pending_approvals(sid, [approval("a9")]),
        lambda s: s.resolve_approval(sid, "a1"),
        lambda s: s.save_checkpoint(sid, checkpoint("c9", 0)),
        lambda s: s.clone_session(sid),
    ]


class SessionRules:
    """SES-1..SES-8."""

    @rule("SES-1")
    async def test_SES_1_create_get_round_trip(self, store: SessionStateStore) -> None:
        meta: JsonObject = {"title": "Trip ✈", "tags": ["a", "b"], "n": 3, "nested": {"ok": True}}
        made = await store.create_session("s-1", user_id="u1", metadata=meta)
        got = await store.get_session("s-1")
        assert got == made
        assert (got.id, got.user_id, got.metadata, got.message_count) == ("s-1", "u1", meta, 0)
        assert got.current_run is None and got.created_at.tzinfo is not None
        minted = [await store.create_session() for _ in range(20)]
        assert len({s.id for s in minted}) == 20
        for s in minted:
            assert await store.get_session(s.id) == s
        assert await store.get_session("never-created") is None
        for bad_id, bad_meta in (("", None), ("s-bad", {"not json": object()}), ("s-bad", [1])):
            with pytest.raises(ValidationError):
                await store.create_session(bad_id, metadata=bad_meta)  # type: ignore[arg-type]
        assert await store.get_session("s-bad") is None

    @rule("SES-2")
    async def test_SES_2_existing_id_refused(self, store: SessionStateStore) -> None:
        await store.create_session("s-1", user_id="u1", metadata={"v": 1})
        await store.append_messages("s-1", commit(user()))
        before = await snapshot(store, "s-1")
        with pytest.raises(SessionExistsError) as caught:
            await store.create_session("s-1", user_id="u2", metadata={"v": 2})
        assert caught.value.code == "state_session_exists"
        assert await snapshot(store, "s-1") == before

    @rule("SES-3")
    async def test_SES_3_delete_removes_everything(self, store: SessionStateStore) -> None:
        await store.create_session("s-1", user_id="u1")
        await _populate(store, "s-1")
        await store.create_session("s-2", user_id="u1")
        assert await store.delete_session("s-1") is True
        await assert_gone(store, "s-1")
        listed = await store.list_sessions("u1")
        assert [s.id for s in listed.sessions] == ["s-2"]
        assert await store.delete_session("s-1") is False
        await store.create_session("s-1", user_id="u1")
        after = await snapshot(store, "s-1")
        assert after["messages"] == [] and after["items"] == [] and after["late"] == []
        assert after["approvals"] == [] and after["checkpoints"] == []
        assert after["info"].current_run is None and after["count"] == 0

    @rule("SES-4")
    async def test_SES_4_clear_keeps_session_and_user(self, store: SessionStateStore) -> None:
        await store.create_session("s-1", user_id="u1", metadata={"k": "v"})
        await _populate(store, "s-1")
        await store.clear_session("s-1")
        after = await snapshot(store, "s-1")
        info = after["info"]
        assert (info.user_id, info.metadata, info.message_count) == ("u1", {"k": "v"}, 0)
        assert info.current_run is not None and info.current_run.run_id == "r1"
        assert info.current_run.status == "cancelled" and info.current_run.ended_at is not None
        assert after["messages"] == [] and after["count"] == 0 and after["ui_count"] == 0
        assert after["items"] == [] and after["late"] == []
        assert after["approvals"] == [] and after["checkpoints"] == []
        assert [s.id for s in (await store.list_sessions("u1")).sessions] == ["s-1"]
        # A cleared item or late answer key is gone, not delivered: it can be recorded anew.
        assert await CONTEXT.record(store, "s-1", "k1") is True
        assert await LATE.record(store, "s-1", "call-1") is True

    @rule("SES-5")
    async def test_SES_5_clone_copies_prefix(self, store: SessionStateStore) -> None:
        await store.create_session("src", user_id="u1", metadata={"m": 1})
        rows: list[Message] = [user("0"), notice("1"), user("2"), user("3")]
        await store.append_messages("src", commit(*rows, start_run=start("r1")))
        await store.save_checkpoint("src", checkpoint("c2", 2))
        await store.save_checkpoint("src", checkpoint("c4", 4))
        await store.add_pending_approvals("src", [approval("a1")])
        clone = await store.clone_session("src", "dst", up_to=2)
        assert (clone.id, clone.user_id, clone.metadata) == ("dst", "u1", {"m": 1})
        assert clone.message_count == 2 and clone.current_run is None
        assert await store.get_messages("dst") == rows[:2]
        assert [c.checkpoint_id for c in await store.list_checkpoints("dst")] == ["c2"]
        assert await store.list_pending_approvals("dst") == []
        await store.append_messages("dst", commit(user("clone only")))
        await store.truncate_messages("src", 1)
        assert await store.get_messages("dst") == [*rows[:2], user("clone only")]
        assert await store.get_messages("src") == rows[:1]
        full = await store.clone_session("dst")
        assert full.id != "dst" and await store.get_messages(full.id) == [
            *rows[:2],
            user("clone only"),
        ]
        for bad in (-1, 4):
            with pytest.raises(ValidationError):
                await store.clone_session("dst", "bad", up_to=bad)
        assert await store.get_session("bad") is None
        with pytest.raises(SessionExistsError):
            await store.clone_session("dst", "src")
        with pytest.raises(SessionNotFoundError):
            await store.clone_session("missing", "x")

    @rule("SES-6")
    async def test_SES_6_listing_per_user_newest_first(self, store: SessionStateStore) -> None:
        for i in range(7):
            await store.create_session(f"s{i}", user_id="u1")
        await store.create_session("other", user_id="u2")
        await store.create_session("nobody")
        for sid in ("s3", "s0", "s5"):
            await asyncio.sleep(0.002)  # distinct activity times, whatever the clock's grain
            await store.append_messages(sid, commit(user()))
        whole = await store.list_sessions("u1", first=500)
        keyed = [(s.last_activity_at, s.id) for s in whole.sessions]
        expected = sorted(keyed, key=lambda k: k[1])
        expected.sort(key=lambda k: k[0], reverse=True)
        assert keyed == expected
        assert [s.id for s in whole.sessions][:3] == ["s5", "s0", "s3"]
        assert whole.next_cursor is None and len(keyed) == 7
        seen: list[str] = []
        cursor = None
        while True:
            page = await store.list_sessions("u1", first=2, cursor=cursor)
            assert 1 <= len(page.sessions) <= 2
            seen += [s.id for s in page.sessions]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == [s.id for s in whole.sessions]
        summary = whole.sessions[0]
        assert (summary.message_count, summary.pending_approvals) == (1, 0)
        assert [s.id for s in (await store.list_sessions("u2")).sessions] == ["other"]
        assert (await store.list_sessions("nobody-at-all")).sessions == ()
        for bad in (0, 501):
            with pytest.raises(ValidationError):
                await store.list_sessions("u1", first=bad)
        for garbage in ("garbage", "", "eyJ2IjoxfQ"):
            with pytest.raises(ValidationError):
                await store.list_sessions("u1", cursor=garbage)
        with pytest.raises(ValidationError):
            await store.list_sessions(
                "u2", cursor=(await store.list_sessions("u1", first=1)).next_cursor
            )

    @rule("SES-7")
    async def test_SES_7_every_write_moves_activity_forward(self, store: SessionStateStore) -> None:
        info = await store.create_session("s-1", user_id="u1")
        last = info.last_activity_at
        writes: list[Callable[[], Awaitable[object]]] = [
            lambda: store.append_messages("s-1", commit(user(), start_run=start("r1"))),
            lambda: store.append_messages("s-1", commit(user(), notice())),
            lambda: store.truncate_messages("s-1", 2),
            lambda: store.pop_messages("s-1"),
            lambda: store.replace_messages("s-1", 0, [user()], expect_message_count=1),
            lambda: store.append_messages("s-1", commit(user(), notice())),
            lambda: store.record_context_item("s-1", item("k1")),
            lambda: store.record_late_answer("s-1", late("call-1")),
            lambda: store.add_pending_approvals("s-1", [approval("a1")]),
            lambda: store.resolve_approval("s-1", "a1"),
            lambda: store.save_checkpoint("s-1", checkpoint("c1", 1)),
            lambda: store.finish_run("s-1", "r1", "completed"),
            lambda: store.clear_session("s-1"),
        ]
        for write in writes:
            await write()
            now = (await store.get_session("s-1")).last_activity_at  # type: ignore[union-attr]
            assert now > last, write
            listed = (await store.list_sessions("u1")).sessions[0]
            assert listed.last_activity_at == now
            last = now

    @rule("SES-8", requires="shared_instances")
    async def test_SES_8_no_resurrection(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            await a.create_session("s-1", user_id="u1")
            await _populate(a, "s-1")
            await a.delete_session("s-1")
            for write in _writes("s-1"):
                with pytest.raises(SessionNotFoundError):
                    await write(b)
                await assert_gone(a, "s-1")
            assert (await a.list_sessions("u1")).sessions == ()
            # Writes racing with the delete either land before it or fail; none re-creates.
            for round_ in range(3):
                sid = f"race-{round_}"
                await a.create_session(sid, user_id="u1")
                await _populate(a, sid)
                racers = [w(b) for w in _writes(sid)[:-1]]
                outcomes = await asyncio.gather(
                    a.delete_session(sid), *racers, return_exceptions=True
                )
                assert outcomes[0] is True
                for outcome in outcomes[1:]:
                    if isinstance(outcome, BaseException):
                        # finish_run, resolve_approval and the replace may also lose to
                        # the racing run start, clear or appends.
                        assert isinstance(
                            outcome,
                            SessionNotFoundError
                            | RunSupersededError
                            | ApprovalNotFoundError
                            | MessageCountConflictError,
                        ), outcome
                await assert_gone(a, sid)
                await assert_gone(b, sid)
            assert (await b.list_sessions("u1")).sessions == ()
