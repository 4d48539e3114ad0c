"""The ``ckptl`` index of checkpoint ids heals itself when a write bypassed it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
import redis.asyncio as aredis

from helix_agents.core import Checkpoint
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio


def _checkpoint(checkpoint_id: str) -> Checkpoint:
    return Checkpoint(
        checkpoint_id=checkpoint_id,
        run_id="r1",
        message_count=0,
        state={"id": checkpoint_id},
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


async def test_page_rebuilds_a_missing_or_stale_index(
    redis_url: str, standalone_factory: Callable[..., RedisStateStore]
) -> None:
    async with standalone_factory() as store, aredis.Redis.from_url(redis_url) as client:
        sid = (await store.create_session()).id
        for cid in ("a", "b", "c"):
            await store.save_checkpoint(sid, _checkpoint(cid))
        ckpt, ckptl = store.options.keys.session(sid, ("ckpt", "ckptl"))
        # Data written before the index existed: no ids in it at all.
        await client.delete(ckptl)
        assert [c.checkpoint_id for c in await store.page_checkpoints(sid)] == ["c", "b", "a"]
        assert await client.zcard(ckptl) == 3
        # A write that dropped a record but not its id.
        await client.hdel(ckpt, "b")
        assert [c.checkpoint_id for c in await store.page_checkpoints(sid)] == ["c", "a"]
        assert await client.zrange(ckptl, 0, -1) == [b"a", b"c"]
