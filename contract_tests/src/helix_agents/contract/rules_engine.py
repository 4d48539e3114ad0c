"""ENG: a store built on core's engine seam keeps the seam's promises (docs/backends/writing.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import pytest

from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore, StartRun
from helix_agents.core.backend import Changes, Engine, Refused, StoreBase, Want, head_of
from helix_agents.core.context import Compaction

from ._base import StoreFactory, rule
from ._helpers import commit, notice, user

_HEAD = Want()


def _based(store: SessionStateStore) -> StoreBase:
    """``store`` as a StoreBase; a wrapper that passes ``engine`` through counts as one."""
    if not isinstance(getattr(store, "engine", None), Engine):
        pytest.fail(
            f"{type(store).__name__} has no engine: set Capabilities(engine=False) "
            "for a store not built on the engine seam"
        )
    return cast(StoreBase, store)


async def _held_is_stored(store: StoreBase, sid: str) -> None:
    held = store._heads[sid]
    stored = await store.engine.snapshot(sid, _HEAD)
    assert stored is not None and held == head_of(stored), "the head core holds is not stored"


class EngineRules:
    """ENG-1 and ENG-2."""

    @rule("ENG-1", requires="engine")
    async def test_ENG_1_the_head_core_holds_is_the_stored_head(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory(max_messages=4) as opened:
            store = _based(opened)
            sid = (await store.create_session(user_id="eng-1", metadata={"k": [1]})).id
            await _held_is_stored(store, sid)
            writes = [
                store.append_messages(sid, commit(user(), notice())),
                store.append_messages(
                    sid, MessageCommit(messages=[user()], start_run=StartRun(run_id="r"))
                ),
                store.append_messages(sid, commit(user(), user(), notice())),  # retention
                store.record_compaction(sid, Compaction(boundary=5, summary="s")),
                store.truncate_messages(sid, 5),
                store.finish_run(sid, "r", "completed"),
                store.clear_session(sid),
            ]
            for write in writes:
                await write
                await _held_is_stored(store, sid)

    @rule("ENG-2", requires="engine")
    async def test_ENG_2_apply_lands_only_at_the_version_it_was_planned_on(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as opened:
            engine = _based(opened).engine
            sid = (await opened.create_session()).id
            before = await engine.snapshot(sid, _HEAD)
            assert before is not None
            at = datetime(2030, 1, 1, tzinfo=UTC)
            row = ChatMessage(role="user", content="once")
            head = await engine.apply(sid, before.version, Changes(activity=at, rows=[row]), _HEAD)
            assert not isinstance(head, Refused)
            assert (head.version, head.message_count) == (before.version + 1, 1)
            assert head.last_activity_at == at
            refused = await engine.apply(
                sid, before.version, Changes(activity=at, rows=[row, row]), _HEAD
            )
            assert isinstance(refused, Refused) and refused.snapshot is not None
            assert head_of(refused.snapshot) == head_of(head)
            assert await opened.get_message_count(sid) == 1
            assert await opened.delete_session(sid)
            gone = await engine.apply(sid, head.version, Changes(activity=at, rows=[row]), _HEAD)
            assert gone == Refused(None)
            assert await opened.get_session(sid) is None
