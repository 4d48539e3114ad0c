"""ADP-7: with its server frozen, ``HelixHistory.load`` and ``save`` fail within the deadline.

Redis alone: a ``redis-server`` of the test's own, stopped with SIGSTOP (its sockets stay
open, it answers nothing), the way the Redis store's own tests freeze one.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from helix_agents.contract.servers import RedisServers
from helix_agents.core import StoreUnavailableError
from helix_agents.pydantic_ai import HelixHistory
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine, as the Redis store's tests allow.
SLACK = 1.0


def _said(text: str) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(text)])]


async def test_adp7_load_and_save_fail_within_the_deadline_on_a_frozen_server(
    redis_servers: RedisServers,
) -> None:
    port = redis_servers.start()
    url = f"redis://127.0.0.1:{port}/0"
    try:
        async with RedisStateStore(
            url, operation_timeout=TIMEOUT, connect_timeout=TIMEOUT
        ) as store:
            used, new = HelixHistory(store, "s"), HelixHistory(store, "new")
            await used.load()
            await used.save(_said("a"))
            await new.load()
            redis_servers.freeze(port)

            async def fails_in_time(call: str, history: HelixHistory) -> None:
                started = time.monotonic()
                with pytest.raises(StoreUnavailableError) as caught:
                    await (history.load() if call == "load" else history.save(_said("b")))
                took = time.monotonic() - started
                assert caught.value.retryable and caught.value.code == "state_unavailable"
                assert took < TIMEOUT + SLACK, (call, took)

            await asyncio.gather(
                *(fails_in_time(call, h) for call in ("save", "load") for h in (used, new))
            )
            redis_servers.thaw(port)
            after = HelixHistory(store, "after")
            await after.load()
            await after.save(_said("c"))
            assert len(await HelixHistory(store, "after").load()) == 1
    finally:
        redis_servers.thaw(port)
