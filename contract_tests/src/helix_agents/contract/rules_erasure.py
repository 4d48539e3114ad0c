"""ERA-1..ERA-5: erasing everything one user stored (docs/lifecycle.md, "Erasure")."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from helix_agents.core import (
    ScopedStateDelta,
    SessionStateStore,
    StoreUnavailableError,
    ValidationError,
)

from ._base import StoreFactory, rule
from ._helpers import assert_gone, commit, snapshot, user
from .erasure_data import ERASED_TEXT, whole_export, write_user_data


def _tag() -> str:
    return uuid.uuid4().hex[:8]


async def _everything(store: SessionStateStore, sids: list[str], users: list[str]) -> Any:
    """Every read of ``sids`` and of the user maps of ``users``."""
    return (
        [await snapshot(store, sid) for sid in sids],
        [await store.get_scoped_state("user", u) for u in users],
    )


class ErasureRules:
    """ERA-1 … ERA-5 (ERA-5's scans of each backend's storage are that backend's tests)."""

    @rule("ERA-1", requires="scoped_state")
    async def test_ERA_1_every_session_and_the_user_map_go(self, store: SessionStateStore) -> None:
        tag = _tag()
        gone, sids = f"u-{tag}", [f"b-{tag}", f"a-{tag}", f"c-{tag}"]
        await write_user_data(store, gone, sids)
        assert await store.get_scoped_state("user", gone) != {}
        assert await store.erase_user(gone) == sorted(sids)
        for sid in sids:
            await assert_gone(store, sid)
        assert (await store.list_sessions(gone)).sessions == ()
        assert (await store.list_all_sessions(user_id=gone)).sessions == ()
        assert await store.get_scoped_state("user", gone) == {}
        again = await store.create_session(sids[0], user_id=gone)
        assert again.message_count == 0 and again.title is None
        assert await store.list_checkpoints(sids[0]) == []
        assert await store.list_pending_approvals(sids[0]) == []

    @rule("ERA-1")
    async def test_ERA_1_a_user_with_more_sessions_than_one_listing_batch(
        self, store: SessionStateStore
    ) -> None:
        ids = [f"s{n:03}" for n in range(450)]  # more than two of core's listing batches
        for sid in ids:
            await store.create_session(sid, user_id="many")
        await store.create_session("other", user_id="someone")
        assert await store.erase_user("many") == ids
        assert (await store.list_sessions("many")).sessions == ()
        assert await store.get_session("s449") is None
        assert await store.get_session("other") is not None

    @rule("ERA-2", requires="scoped_state")
    async def test_ERA_2_nothing_else_changes(self, store: SessionStateStore) -> None:
        tag = _tag()
        gone, kept = f"u-{tag}", f"v-{tag}"
        await write_user_data(store, gone, [f"g-{tag}"])
        await write_user_data(store, kept, [f"k-{tag}"])
        await store.create_session(f"n-{tag}", user_id=None)
        shared = ScopedStateDelta(scope="app", owner=f"app-{tag}", changes={"x": 1})
        await store.append_messages(f"g-{tag}", commit(user("x"), scoped_state=(shared,)))
        before = await _everything(store, [f"k-{tag}", f"n-{tag}"], [kept])
        assert await store.erase_user(gone) == [f"g-{tag}"]
        assert await _everything(store, [f"k-{tag}", f"n-{tag}"], [kept]) == before
        assert await store.get_scoped_state("app", f"app-{tag}") == {"x": 1}
        assert [s.id for s in (await store.list_sessions(kept)).sessions] == [f"k-{tag}"]

    @rule("ERA-3")
    async def test_ERA_3_erasing_again_erases_nothing(self, store: SessionStateStore) -> None:
        tag = _tag()
        await store.create_session(f"s-{tag}", user_id=f"u-{tag}")
        await store.create_session(f"t-{tag}", user_id=f"v-{tag}")
        assert await store.erase_user(f"u-{tag}") == [f"s-{tag}"]
        before = await snapshot(store, f"t-{tag}")
        assert await store.erase_user(f"u-{tag}") == []
        assert await store.erase_user(f"nobody-{tag}") == []
        assert await snapshot(store, f"t-{tag}") == before

    @rule("ERA-4")
    async def test_ERA_4_a_bad_user_id_erases_nothing(
        self, store: SessionStateStore, store_factory: StoreFactory
    ) -> None:
        tag = _tag()
        await store.create_session(f"s-{tag}", user_id=None)
        await store.create_session(f"t-{tag}", user_id=f"u-{tag}")
        before = [await snapshot(store, f"{p}-{tag}") for p in "st"]
        for bad in ("", "x" * 10_000, 7, None, "a\x00b"):
            with pytest.raises(ValidationError):
                await store.erase_user(bad)  # type: ignore[arg-type]
        assert [await snapshot(store, f"{p}-{tag}") for p in "st"] == before
        closed = store_factory()
        async with closed:
            pass
        with pytest.raises(StoreUnavailableError):
            await closed.erase_user(7)  # type: ignore[arg-type]

    @rule("ERA-5", requires="engine")  # the export reads the engine
    async def test_ERA_5_the_whole_store_holds_nothing_of_the_user(
        self, store: SessionStateStore
    ) -> None:
        tag = _tag()
        gone, sids = f"erased-user-{tag}", [f"erased-a-{tag}", f"erased-b-{tag}"]
        await write_user_data(store, gone, sids)
        await store.create_session(f"kept-{tag}", user_id=f"kept-user-{tag}")
        await store.append_messages(f"kept-{tag}", commit(user(f"kept-text-{tag}")))
        needles = (gone, *sids, ERASED_TEXT)
        before = "".join(await whole_export(store))
        assert all(n in before for n in needles)
        await store.erase_user(gone)
        after = "".join(await whole_export(store))
        assert [n for n in needles if n in after] == []
        assert f"kept-text-{tag}" in after and f"kept-user-{tag}" in after
