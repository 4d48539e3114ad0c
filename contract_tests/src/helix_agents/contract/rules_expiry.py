"""TTL-1..TTL-8: session expiry, the sweep and checkpoint retention (docs/lifecycle.md,
"Expiry"), on the factory's clock, so no rule sleeps for a TTL."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from helix_agents.core import (
    Checkpoint,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
    StoreUnavailableError,
    ValidationError,
)

from ._base import StoreFactory, rule
from ._helpers import FrozenClock, at, commit, snapshot, user


async def _ids(store: SessionStateStore, user_id: str = "u") -> list[str]:
    return [s.id for s in (await store.list_sessions(user_id, first=500)).sessions]


async def _all_ids(store: SessionStateStore) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=500)).sessions]


async def _gone(store: SessionStateStore, sid: str) -> None:
    """Reads and writes of ``sid`` find no session."""
    assert await store.get_session(sid) is None
    calls: list[Any] = [
        lambda: store.get_messages(sid),
        lambda: store.get_message_count(sid),
        lambda: store.list_checkpoints(sid),
        lambda: store.append_messages(sid, commit(user())),
        lambda: store.update_session_metadata(sid, {"k": 1}),
        lambda: store.get_session_expiry(sid),
        lambda: store.set_session_expiry(sid),
    ]
    for call in calls:
        with pytest.raises(SessionNotFoundError):
            await call()


def _checkpoint(cid: str, seconds: float) -> Checkpoint:
    return Checkpoint(
        checkpoint_id=cid, run_id="r", message_count=0, state={}, created_at=at(seconds)
    )


class ExpiryRules:
    """Idle and absolute TTLs, per store and per session; the sweep; checkpoint retention."""

    @rule("TTL-1", requires=("clock", "clock_idle_ttl"))
    async def test_TTL_1_an_idle_session_is_gone_at_once(self, store_factory: StoreFactory) -> None:
        clock = FrozenClock()
        async with store_factory(idle_ttl=60, clock=clock) as store:
            for sid in ("a", "b", "c"):
                await store.create_session(sid, user_id="u")
            clock.advance(30)
            await store.append_messages("b", commit(user()))
            await store.get_messages("a")  # a read does not refresh
            with pytest.raises(ValidationError):
                await store.truncate_messages("c", 5)  # nor does a refused write
            clock.advance(29)
            assert await _ids(store) == ["b", "a", "c"]
            assert sorted(await _all_ids(store)) == ["a", "b", "c"]
            clock.advance(1)  # "a" and "c": exactly 60 s idle
            assert await _ids(store) == ["b"]
            assert await _all_ids(store) == ["b"]
            for sid in ("a", "c"):
                await _gone(store, sid)
            clock.advance(29)
            assert await store.get_session("b") is not None
            clock.advance(1)
            await _gone(store, "b")
            assert await _all_ids(store) == [] and await _ids(store) == []
            # A store without idle_ttl on the same data still sees them.
            if type(self).capabilities.shared_instances:  # type: ignore[attr-defined]
                async with store_factory(clock=clock) as plain:
                    assert sorted(await _all_ids(plain)) == ["a", "b", "c"]

    @rule("TTL-1", requires=("clock", "clock_idle_ttl"))
    async def test_TTL_1_listings_stay_full_past_expired_sessions(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(idle_ttl=100, clock=clock) as store:
            for n in range(6):
                await store.create_session(f"a{n}", user_id="u")  # old: sorts first by id
            clock.advance(50)
            for n in range(5):
                await store.create_session(f"b{n}", user_id="u")
            await store.append_messages("a5", commit(user()))  # newest activity of all
            clock.advance(50)  # every "a" session but a5 expires
            page = await store.list_sessions("u", first=2)
            assert [s.id for s in page.sessions] == ["a5", "b0"]
            seen = [s.id for s in page.sessions]
            while page.next_cursor is not None:
                page = await store.list_sessions("u", first=2, cursor=page.next_cursor)
                seen += [s.id for s in page.sessions]
            assert seen == ["a5", "b0", "b1", "b2", "b3", "b4"]
            listed = await store.list_all_sessions(first=3)
            assert [s.id for s in listed.sessions] == ["a5", "b0", "b1"]
            rest = await store.list_all_sessions(first=3, cursor=listed.next_cursor)
            assert [s.id for s in rest.sessions] == ["b2", "b3", "b4"]

    @rule("TTL-2", requires="clock")
    async def test_TTL_2_a_session_has_its_own_idle_ttl_and_expiry(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock) as store:
            await store.create_session("s", user_id="u", metadata={"k": 1})
            none = await store.get_session_expiry("s")
            assert (none.idle_ttl, none.expires_at, none.deadline) == (None, None, None)
            before = await store.get_session("s")
            assert before is not None
            clock.advance(1)
            done = await store.set_session_expiry("s", idle_ttl=timedelta(seconds=10))
            after = await store.get_session("s")
            assert after is not None and after.last_activity_at > before.last_activity_at
            assert after.metadata == {"k": 1} and after.metadata_version == 0
            assert done.idle_ttl == timedelta(seconds=10) and done.expires_at is None
            assert done.deadline == after.last_activity_at + timedelta(seconds=10)
            assert await store.get_session_expiry("s") == done
            # An absolute expiry before the idle deadline wins; a later one does not.
            soon = clock.now + timedelta(seconds=5)
            both = await store.set_session_expiry("s", idle_ttl=10.0, expires_at=soon)
            assert both.deadline == soon and both.expires_at == soon
            late = clock.now + timedelta(hours=1)
            done = await store.set_session_expiry("s", idle_ttl=10, expires_at=late)
            info = await store.get_session("s")
            assert info is not None
            assert done.deadline == info.last_activity_at + timedelta(seconds=10)
            # Settings survive a clear, and a write moves the idle deadline.
            await store.clear_session("s")
            clock.advance(9)
            await store.append_messages("s", commit(user()))
            clock.advance(9)
            assert await store.get_session("s") is not None
            clock.advance(1)
            await _gone(store, "s")
            # Cleared settings: the session never expires.
            await store.create_session("t")
            await store.set_session_expiry("t", expires_at=clock.now + timedelta(seconds=1))
            cleared = await store.set_session_expiry("t")
            assert cleared.deadline is None and cleared.expires_at is None
            clock.advance(3600)
            assert await store.get_session("t") is not None

    @rule("TTL-2", requires=("clock", "clock_idle_ttl"))
    async def test_TTL_2_a_sessions_own_idle_ttl_replaces_the_stores(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(idle_ttl=60, clock=clock) as store:
            await store.create_session("long")
            await store.create_session("short")
            await store.create_session("plain")
            await store.set_session_expiry("long", idle_ttl=600)
            await store.set_session_expiry("short", idle_ttl=5)
            clock.advance(6)
            assert await store.get_session("short") is None
            clock.advance(54)  # "plain": 60 s since its create
            assert await store.get_session("plain") is None
            assert await store.get_session("long") is not None
            clone = await store.clone_session("long", "copy")
            assert (await store.get_session_expiry("copy")).idle_ttl == timedelta(seconds=600)
            assert clone.id == "copy"
            clock.advance(600)
            assert await store.get_session("long") is None
            assert await store.get_session("copy") is None

    @rule("TTL-3", requires="clock")
    async def test_TTL_3_an_expired_id_is_free_for_a_new_session(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock) as store:
            await store.create_session("s", user_id="old", metadata={"m": 1})
            await store.append_messages("s", commit(user("old row")))
            await store.save_checkpoint("s", _checkpoint("cp", 0))
            await store.set_session_expiry("s", expires_at=clock.now + timedelta(seconds=10))
            await store.create_session("live")
            with pytest.raises(SessionExistsError):
                await store.create_session("s")
            clock.advance(10)
            info = await store.create_session("s", user_id="new")
            assert info.user_id == "new" and info.metadata == {} and info.message_count == 0
            assert await store.get_messages("s") == []
            assert await store.list_checkpoints("s") == []
            assert (await store.get_session_expiry("s")).deadline is None
            assert await _ids(store, "new") == ["s"] and await _ids(store, "old") == []
            # A clone may take an expired id as its target.
            await store.set_session_expiry("s", expires_at=clock.now)
            copy = await store.clone_session("live", "s")
            assert copy.id == "s" and await store.get_session("s") is not None
            with pytest.raises(SessionExistsError):
                await store.create_session("live")

    @rule("TTL-4", requires="clock")
    async def test_TTL_4_the_sweep_deletes_expired_sessions_in_bounded_batches(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock, sweep_interval=None) as store:
            for n in range(7):
                await store.create_session(f"s{n}")
                if n % 2 == 0:
                    await store.set_session_expiry(f"s{n}", idle_ttl=10)
            await store.set_session_expiry("s1", expires_at=clock.now + timedelta(hours=1))
            assert (await store.sweep()).deleted == ()
            clock.advance(11)
            first = await store.sweep(limit=3)
            assert first.scanned == 3 and not first.wrapped
            assert first.deleted == ("s0", "s2")
            second = await store.sweep(limit=3)
            assert second.scanned == 3 and second.deleted == ("s4",) and not second.wrapped
            third = await store.sweep(limit=3)
            assert third.deleted == ("s6",) and third.wrapped and third.scanned == 1
            assert await _all_ids(store) == ["s1", "s3", "s5"]
            if type(self).capabilities.shared_instances:  # type: ignore[attr-defined]
                # A store whose clock is still at the start would see them, were they stored.
                async with store_factory(clock=FrozenClock()) as other:
                    assert await other.get_session("s1") is not None
                    for sid in ("s0", "s2", "s4", "s6"):
                        assert await other.get_session(sid) is None
            # The next sweep starts from the first session again.
            clock.advance(3600)
            again = await store.sweep()
            assert again.deleted == ("s1",) and again.wrapped and again.scanned == 3
            for bad in (0, 100_001, 1.5, True, "3"):
                with pytest.raises(ValidationError):
                    await store.sweep(limit=bad)  # type: ignore[arg-type]
        with pytest.raises(StoreUnavailableError):
            await store.sweep()

    @rule("TTL-4", requires="clock")
    async def test_TTL_4_a_sweep_reads_exactly_its_limit_across_batches(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock, sweep_interval=None) as store:
            for n in range(450):
                await store.create_session(f"s{n:03}")
            await store.set_session_expiry("s260", expires_at=clock.now)
            await store.set_session_expiry("s449", expires_at=clock.now)
            first = await store.sweep(limit=250)  # two batches: 200, then 50
            assert (first.scanned, first.deleted, first.wrapped) == (250, (), False)
            one = await store.sweep(limit=1)
            assert (one.scanned, one.deleted, one.wrapped) == (1, (), False)
            rest = await store.sweep(limit=500)
            assert (rest.scanned, rest.deleted, rest.wrapped) == (199, ("s260", "s449"), True)

    @rule("TTL-4", requires="clock")
    async def test_TTL_4_a_session_written_before_the_sweep_is_kept(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock, sweep_interval=None) as store:
            await store.create_session("s")
            await store.set_session_expiry("s", idle_ttl=10)
            clock.advance(9)
            await store.append_messages("s", commit(user()))
            clock.advance(9)
            assert (await store.sweep()).deleted == ()
            assert await store.get_message_count("s") == 1

    @rule("TTL-5", requires=("clock", "shared_instances"))
    async def test_TTL_5_an_open_store_sweeps_by_itself(self, store_factory: StoreFactory) -> None:
        clock = FrozenClock()
        # ``other``'s clock stays at the start: it sees a session until it is removed.
        async with store_factory(clock=FrozenClock()) as other:
            async with store_factory(clock=clock, sweep_interval=0.02) as store:
                await store.create_session("s")
                await store.create_session("kept")
                await store.set_session_expiry("s", expires_at=clock.now + timedelta(seconds=1))
                assert await _all_ids(other) == ["kept", "s"]
                clock.advance(1)
                for _ in range(250):
                    if "s" not in await _all_ids(other):
                        break
                    await asyncio.sleep(0.02)
                assert await _all_ids(other) == ["kept"]
            # Without the sweeper an expired session stays stored until a sweep.
            async with store_factory(clock=clock, sweep_interval=None) as idle:
                await idle.create_session("t")
                await idle.set_session_expiry("t", expires_at=clock.now)
                await asyncio.sleep(0.1)
                assert await idle.get_session("t") is None
                assert await other.get_session("t") is not None
                assert (await idle.sweep()).deleted == ("t",)
                assert await other.get_session("t") is None

    @rule("TTL-6")
    async def test_TTL_6_bad_expiry_arguments_write_nothing(
        self, store: SessionStateStore, store_factory: StoreFactory
    ) -> None:
        await store.create_session("s")
        before = await snapshot(store, "s")
        expiry = await store.get_session_expiry("s")
        bad_ttls: list[Any] = [0, -1, 0.0001, float("nan"), float("inf"), "10", True, 1e13, []]
        bad_ats: list[Any] = [at(0).replace(tzinfo=None), "2030-01-01", 0]
        for ttl in bad_ttls:
            with pytest.raises(ValidationError) as caught:
                await store.set_session_expiry("s", idle_ttl=ttl)
            assert caught.value.session_id == "s"
        for when in bad_ats:
            with pytest.raises(ValidationError) as caught:
                await store.set_session_expiry("s", expires_at=when)
            assert caught.value.session_id == "s"
        assert await snapshot(store, "s") == before
        assert await store.get_session_expiry("s") == expiry
        # The order of checks: a bad id, then a missing session, then the argument.
        with pytest.raises(ValidationError):
            await store.set_session_expiry("", idle_ttl=0)
        with pytest.raises(SessionNotFoundError):
            await store.set_session_expiry("missing", idle_ttl=0)
        with pytest.raises(SessionNotFoundError):
            await store.get_session_expiry("missing")
        for options in (
            {"sweep_interval": 0},
            {"checkpoint_ttl": -5},
            {"keep_checkpoints": 0},
            {"keep_checkpoints": 2.0},
        ):
            with pytest.raises(ValidationError):
                store_factory(**options)
        if type(self).capabilities.clock_idle_ttl:  # type: ignore[attr-defined]
            with pytest.raises(ValidationError):
                store_factory(idle_ttl=0)

    @rule("TTL-7", requires="clock")
    async def test_TTL_7_checkpoint_retention_keeps_the_newest(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock(at(1000))
        async with store_factory(clock=clock, keep_checkpoints=3) as store:
            await store.create_session("s")
            for n, cid in enumerate(["e", "d", "c", "b"]):  # created in this order
                await store.save_checkpoint("s", _checkpoint(cid, n))
            assert [c.checkpoint_id for c in await store.list_checkpoints("s")] == ["d", "c", "b"]
            # One saved with an older time is still kept; the oldest others go.
            await store.save_checkpoint("s", _checkpoint("a", -5))
            kept = {c.checkpoint_id for c in await store.list_checkpoints("s")}
            assert kept == {"a", "b", "c"}
            # A repeated save drops nothing.
            await store.save_checkpoint("s", _checkpoint("c", 2))
            assert {c.checkpoint_id for c in await store.list_checkpoints("s")} == kept
        async with store_factory(clock=clock, checkpoint_ttl=100) as store:
            await store.create_session("t")
            await store.save_checkpoint("t", _checkpoint("old", 900))
            await store.save_checkpoint("t", _checkpoint("mid", 901))
            await store.save_checkpoint("t", _checkpoint("new", 950))
            got = [c.checkpoint_id for c in await store.list_checkpoints("t")]
            assert got == ["mid", "new"]

    @rule("TTL-8", requires=("clock", "shared_instances"))
    async def test_TTL_8_expiry_holds_for_every_store_on_the_data(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with (
            store_factory(clock=clock) as one,
            store_factory(clock=clock, sweep_interval=None) as two,
        ):
            await one.create_session("s", user_id="u")
            await one.create_session("kept", user_id="u")
            await two.get_message_count("s")  # two remembers its head
            await one.set_session_expiry("s", expires_at=clock.now + timedelta(seconds=5))
            clock.advance(5)
            assert await two.get_session("s") is None
            with pytest.raises(SessionNotFoundError):
                await two.append_messages("s", commit(user()))
            assert await _ids(two) == ["kept"]
            assert (await two.sweep()).deleted == ("s",)
            assert (await one.sweep()).deleted == ()
            assert await _all_ids(one) == ["kept"]
