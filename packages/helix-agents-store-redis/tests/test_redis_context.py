"""History search on Redis: across the live log and the archive retention filled."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import Compaction
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio


async def test_search_crosses_the_live_log_and_the_archive(
    standalone_factory: Callable[..., RedisStateStore],
) -> None:
    async with standalone_factory(max_messages=10) as store:
        sid = (await store.create_session()).id
        await store.append_messages(
            sid, MessageCommit(messages=(ChatMessage(role="user", content="needle 0"),))
        )
        await store.record_compaction(sid, Compaction(boundary=1, summary="s"))
        for i in range(1, 50):
            text = f"needle {i}" if i % 10 == 0 else f"hay {i}"
            await store.append_messages(
                sid, MessageCommit(messages=(ChatMessage(role="user", content=text),))
            )
        found = await store.search_history(sid, grep=r"needle \d+")
        assert [(h.index, h.archived) for h in found.hits] == [
            (40, False),
            (30, True),
            (20, True),
            (10, True),
            (0, True),
        ]
        capped = await store.search_history(sid, grep=r"needle \d+", limit=2)
        assert [h.index for h in capped.hits] == [40, 30] and capped.truncated
