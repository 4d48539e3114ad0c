"""Scoped state (SCS): app, user and session maps changed inside the commit.

The design is docs/scoped-state.md.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    ScopedStateDelta,
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    ValidationError,
)
from helix_agents.core.limits import MAX_SCOPED_KEYS
from helix_agents.core.models import Scope

from ._base import StoreFactory, rule
from ._helpers import commit, snapshot, start, user

_ODD: dict[str, Any] = {
    "nested": {"list": [1, 2.5, None, True, "x"], "deep": {"a": {"b": []}}},
    "nul": "a\x00b",
    "emoji": "🙂 \u202e rtl",
    "big": 10**40,
    "null": None,
}


def _owner(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:8]}"


def app(owner: str, **changes: Any) -> ScopedStateDelta:
    """A delta of the app map ``owner``."""
    return ScopedStateDelta(scope="app", owner=owner, changes=changes)


def usr(owner: str, **changes: Any) -> ScopedStateDelta:
    """A delta of the user map ``owner``."""
    return ScopedStateDelta(scope="user", owner=owner, changes=changes)


def own(**changes: Any) -> ScopedStateDelta:
    """A delta of the commit's own session map."""
    return ScopedStateDelta(scope="session", changes=changes)


class ScopedStateRules:
    """SCS-1 … SCS-5."""

    @rule("SCS-1", requires="scoped_state")
    async def test_SCS_1_deltas_land_with_their_rows_or_not_at_all(
        self, store: SessionStateStore
    ) -> None:
        a, u = _owner("app"), _owner("user")
        sid = (await store.create_session(user_id=u)).id
        landed = await store.append_messages(
            sid,
            commit(
                user("hi"),
                expect_message_count=0,
                commit_id="c1",
                scoped_state=(app(a, x=1, y=1), usr(u, k="v"), own(s=1), app(a, y=2)),
            ),
        )
        assert landed.message_count == 1
        assert await store.get_scoped_state("app", a) == {"x": 1, "y": 2}
        assert await store.get_scoped_state("user", u) == {"k": "v"}
        assert await store.get_scoped_state("session", sid) == {"s": 1}
        # A replay applies nothing a second time, even with other values.
        again = commit(user("hi"), commit_id="c1", scoped_state=(app(a, x=99),))
        assert (await store.append_messages(sid, again)).replayed
        assert await store.get_scoped_state("app", a) == {"x": 1, "y": 2}
        # Every refusal of the commit leaves the maps as they were.
        await store.append_messages(sid, commit(start_run=start("r1")))
        await store.finish_run(sid, "r1", "completed")
        refused: list[tuple[type[StateStoreError], Any]] = [
            (MessageCountConflictError, commit(user("x"), expect_message_count=0)),
            (RunSupersededError, commit(user("x"), fence_run_id="r1")),
            (ValidationError, commit(user("x"), start_run=start("r1"))),
        ]
        before = await snapshot(store, sid)
        for error, bad in refused:
            with_deltas = bad.model_copy(
                update={"scoped_state": (app(a, x=2), usr(u, k="w"), own(s=2))}
            )
            with pytest.raises(error):
                await store.append_messages(sid, with_deltas)
        with pytest.raises(SessionNotFoundError):
            await store.append_messages("no-such-session", commit(scoped_state=(app(a, x=3),)))
        assert await snapshot(store, sid) == before
        assert await store.get_scoped_state("app", a) == {"x": 1, "y": 2}
        assert await store.get_scoped_state("user", u) == {"k": "v"}
        assert await store.get_scoped_state("session", sid) == {"s": 1}

    @rule("SCS-2", requires="scoped_state")
    async def test_SCS_2_maps_round_trip_shared_and_independent(
        self, store_factory: StoreFactory
    ) -> None:
        owner = _owner("shared")
        async with store_factory() as one, store_factory() as two:
            assert await one.get_scoped_state("app", owner) == {}
            s1 = (await one.create_session()).id
            s2 = (await two.create_session()).id
            assert await one.get_scoped_state("session", s1) == {}
            await one.append_messages(s1, commit(scoped_state=(app(owner, **_ODD),)))
            await two.append_messages(s2, commit(scoped_state=(usr(owner, only="user"),)))
            await two.append_messages(s2, commit(scoped_state=(app(owner, more=[1]),)))
            assert await two.get_scoped_state("app", owner) == {**_ODD, "more": [1]}
            assert await one.get_scoped_state("user", owner) == {"only": "user"}
            big = (await one.get_scoped_state("app", owner))["big"]
            assert type(big) is int and big == 10**40
            assert await one.get_scoped_state("session", s2) == {}
            await two.append_messages(s2, commit(scoped_state=(own(**_ODD),)))
            # A map handed out is the caller's: changing it changes nothing stored,
            # whatever its scope.
            handed_out: list[tuple[Scope, str, dict[str, Any]]] = [
                ("app", owner, {**_ODD, "more": [1]}),
                ("session", s2, _ODD),
            ]
            for scope, key, stored in handed_out:
                got: dict[str, Any] = await one.get_scoped_state(scope, key)
                got["nested"]["list"].append("mine")
                got["nested"]["deep"]["a"]["b"].append("mine")
                assert await one.get_scoped_state(scope, key) == stored
            assert await one.get_scoped_state("session", s1) == {}
            # A map committed is the store's: changing the caller's delta after the commit
            # changes nothing stored. And one commit, the session's map named first, changes
            # every map it names.
            mine = own(n={"list": [1]})
            await one.append_messages(s1, commit(scoped_state=(mine, usr(owner, then=2))))
            held: Any = mine.changes["n"]
            held["list"].append("mine")
            assert await one.get_scoped_state("session", s1) == {"n": {"list": [1]}}
            assert await two.get_scoped_state("user", owner) == {"only": "user", "then": 2}

    @rule("SCS-3", requires="scoped_state")
    async def test_SCS_3_bad_deltas_are_refused_naming_the_session(
        self, store: SessionStateStore
    ) -> None:
        a = _owner("app")
        sid = (await store.create_session()).id
        bad_deltas: list[Any] = [
            ScopedStateDelta.model_construct(scope="app", owner=None, changes={"k": 1}),
            ScopedStateDelta.model_construct(scope="session", owner="x", changes={"k": 1}),
            ScopedStateDelta.model_construct(scope="user", owner="", changes={"k": 1}),
            ScopedStateDelta.model_construct(scope="user", owner="a\x00b", changes={"k": 1}),
            ScopedStateDelta.model_construct(scope="app", owner=a, changes={"": 1}),
            ScopedStateDelta.model_construct(scope="app", owner=a, changes={"k" * 513: 1}),
            ScopedStateDelta.model_construct(scope="app", owner=a, changes={"k": float("nan")}),
            ScopedStateDelta.model_construct(scope="app", owner=a, changes={"k": {1, 2}}),  # type: ignore[dict-item]
            ScopedStateDelta.model_construct(scope="global", owner=a, changes={"k": 1}),  # type: ignore[arg-type]
            app(a, **{f"k{i}": i for i in range(MAX_SCOPED_KEYS + 1)}),
        ]
        before = await snapshot(store, sid)
        for bad in bad_deltas:
            raw = commit(user("x"), scoped_state=(app(a, fine=1),)).model_dump()
            raw["scoped_state"] = (app(a, fine=1), bad)
            with pytest.raises(ValidationError) as caught:
                await store.append_messages(sid, raw)  # type: ignore[arg-type]
            assert caught.value.session_id == sid and sid in str(caught.value)
        assert await snapshot(store, sid) == before
        assert await store.get_scoped_state("app", a) == {}
        for scope, owner in (("global", a), ("app", ""), ("user", 7), ("session", "a\x00")):
            with pytest.raises(ValidationError):
                await store.get_scoped_state(scope, owner)  # type: ignore[arg-type]
        with pytest.raises(SessionNotFoundError):
            await store.get_scoped_state("session", _owner("missing"))

    @rule("SCS-4", requires="scoped_state")
    async def test_SCS_4_delete_clear_clone_and_cuts(self, store: SessionStateStore) -> None:
        a, u = _owner("app"), _owner("user")
        sid = (await store.create_session(user_id=u)).id
        deltas = (app(a, n=1), usr(u, n=1), own(n=1))
        await store.append_messages(sid, commit(user("0"), user("1"), scoped_state=deltas))
        copy = await store.clone_session(sid)
        assert await store.get_scoped_state("session", copy.id) == {}
        await store.truncate_messages(sid, 0)
        assert await store.get_scoped_state("session", sid) == {"n": 1}
        await store.clear_session(sid)
        assert await store.get_scoped_state("session", sid) == {}
        await store.append_messages(sid, commit(scoped_state=(own(n=2),)))
        assert await store.delete_session(sid)
        assert await store.get_scoped_state("app", a) == {"n": 1}
        assert await store.get_scoped_state("user", u) == {"n": 1}
        with pytest.raises(SessionNotFoundError):
            await store.get_scoped_state("session", sid)
        await store.create_session(sid, user_id=u)
        assert await store.get_scoped_state("session", sid) == {}

    @rule("SCS-5", requires="scoped_state")
    async def test_SCS_5_concurrent_deltas_to_one_map_are_not_lost(
        self, store_factory: StoreFactory
    ) -> None:
        u = _owner("user")
        writers = 4
        per_writer = 5
        async with store_factory() as one, store_factory() as two:
            stores = (one, two)
            sids = [(await one.create_session(user_id=u)).id for _ in range(writers)]

            async def write(w: int) -> None:
                store = stores[w % 2]
                for n in range(per_writer):
                    delta = usr(u, **{f"w{w}-{n}": n})
                    await store.append_messages(sids[w], commit(user("x"), scoped_state=(delta,)))

            async with anyio.create_task_group() as tg:
                for w in range(writers):
                    tg.start_soon(write, w)
            got = await two.get_scoped_state("user", u)
            assert got == {f"w{w}-{n}": n for w in range(writers) for n in range(per_writer)}
