"""Each call waits for its reply at most ``operation_timeout``, from when it was sent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from helix_agents.core import ChatMessage, MessageCommit, StoreUnavailableError
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

Freezable = tuple[str, Callable[[], None], Callable[[], None]]


async def test_calls_to_a_frozen_server_time_out_each_after_the_timeout(
    frozen_redis: Freezable,
) -> None:
    """A stuck server: a commit sent on a kept connection, and one sent 0.3 s later on
    another (each on a session whose head the store has seen: one EVALSHA), each raise
    the typed error one timeout after it was sent, not sooner."""
    url, freeze, thaw = frozen_redis
    async with RedisStateStore(url, operation_timeout=0.5) as store:
        sids = [(await store.create_session()).id for _ in range(2)]
        await asyncio.gather(*(store.get_messages(sid) for sid in sids))  # two connections
        freeze()
        started = time.monotonic()

        async def commit(sid: str, text: str, delay: float) -> float:
            await asyncio.sleep(delay)
            turn = MessageCommit(messages=(ChatMessage(role="user", content=text),))
            sent = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="did not answer in time") as err:
                await store.append_messages(sid, turn)
            assert err.value.may_have_landed
            return time.monotonic() - sent

        took = await asyncio.gather(commit(sids[0], "a", 0), commit(sids[1], "b", 0.3))
        assert all(0.45 <= t < 0.5 + 1.0 for t in took), took
        assert time.monotonic() - started >= 0.75
        thaw()
        assert [await store.get_message_count(sid) for sid in sids] == [1, 1]  # both ran
