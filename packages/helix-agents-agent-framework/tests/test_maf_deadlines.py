"""ADP-7: with its server frozen, ``get_messages`` and ``save_messages`` fail within the deadline.

Redis alone: a ``redis-server`` of the test's own, stopped with SIGSTOP (its sockets stay
open, it answers nothing), the way the Redis store's own tests freeze one.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from agent_framework import Message

from helix_agents.agent_framework import HelixHistoryProvider
from helix_agents.contract.servers import RedisServers
from helix_agents.core import StoreUnavailableError
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine, as the Redis store's tests allow.
SLACK = 1.0


async def test_adp7_load_and_save_fail_within_the_deadline_on_a_frozen_server(
    redis_servers: RedisServers,
) -> None:
    port = redis_servers.start()
    url = f"redis://127.0.0.1:{port}/0"
    try:
        async with RedisStateStore(
            url, operation_timeout=TIMEOUT, connect_timeout=TIMEOUT
        ) as store:
            provider = HelixHistoryProvider(store)
            state: dict[str, Any] = {}
            await provider.get_messages("used", state=state)
            await provider.save_messages("used", [Message("user", ["a"])], state=state)
            redis_servers.freeze(port)

            async def fails_in_time(call: str, session_id: str) -> None:
                started = time.monotonic()
                said = [Message("user", ["b"])]
                with pytest.raises(StoreUnavailableError) as caught:
                    await (
                        provider.get_messages(session_id)
                        if call == "load"
                        else provider.save_messages(session_id, said)
                    )
                took = time.monotonic() - started
                assert caught.value.retryable and caught.value.code == "state_unavailable"
                assert took < TIMEOUT + SLACK, (call, took)

            await asyncio.gather(
                *(fails_in_time(c, s) for c in ("save", "load") for s in ("used", "new"))
            )
            redis_servers.thaw(port)
            await provider.save_messages("after", [Message("user", ["c"])])
            assert len(await provider.get_messages("after")) == 1
    finally:
        redis_servers.thaw(port)
