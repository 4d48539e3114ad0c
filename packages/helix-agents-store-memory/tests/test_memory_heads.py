"""The heads StoreBase remembers are the engine's own (docs/architecture.md, "Round trips"):
a write planned from a wrong head that the version guard lets through would land wrong."""

from __future__ import annotations

import pytest

from helix_agents.core import ChatMessage, ContextMessage, MessageCommit, StartRun
from helix_agents.core.backend import Want, head_of
from helix_agents.core.context import Compaction
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio


async def _same_head(store: MemoryStateStore, sid: str) -> None:
    held = store._heads[sid]
    actual = await store.engine.snapshot(sid, Want())
    assert actual is not None and held == head_of(actual)


async def test_every_write_leaves_the_engines_head() -> None:
    async with MemoryStateStore(max_messages=4) as store:
        sid = (await store.create_session(user_id="u", metadata={"k": [1]})).id
        await _same_head(store, sid)
        user = ChatMessage(role="user", content="hi")
        note = ContextMessage(kind="notice", content="n")
        await store.append_messages(sid, MessageCommit(messages=[user, note]))
        await _same_head(store, sid)
        await store.append_messages(
            sid, MessageCommit(messages=[user], start_run=StartRun(run_id="r"))
        )
        await _same_head(store, sid)
        await store.append_messages(sid, MessageCommit(messages=[user, user, note]))
        await _same_head(store, sid)  # retention dropped rows
        await store.record_compaction(
            sid,
            Compaction(boundary=5, summary="s", strategy="hybrid"),
        )
        await _same_head(store, sid)
        await store.truncate_messages(sid, 5)
        await _same_head(store, sid)
        await store.finish_run(sid, "r", "completed")
        await _same_head(store, sid)
        await store.clear_session(sid)
        await _same_head(store, sid)
