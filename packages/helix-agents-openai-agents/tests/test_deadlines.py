"""ADP-7: with its server frozen, every HelixSession method fails within the store's deadline.

Redis alone: a ``redis-server`` of the test's own, stopped with SIGSTOP (its sockets stay
open, it answers nothing), the way the Redis store's own tests freeze one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from agents import TResponseInputItem

from helix_agents.contract.servers import RedisServers
from helix_agents.core import StoreUnavailableError
from helix_agents.openai_agents import HelixSession
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine, as the Redis store's tests allow.
SLACK = 1.0

Frozen = tuple[str, Callable[[], None], Callable[[], None]]


@pytest.fixture
def frozen_redis(redis_servers: RedisServers) -> Iterator[Frozen]:
    """A server of this test's own, a function that freezes it and one that thaws it."""
    port = redis_servers.start()
    yield (
        f"redis://127.0.0.1:{port}/0",
        lambda: redis_servers.freeze(port),
        lambda: redis_servers.thaw(port),
    )
    redis_servers.thaw(port)


def said(*texts: str) -> list[TResponseInputItem]:
    return [{"role": "user", "content": t} for t in texts]


CALLS: dict[str, Callable[[HelixSession], Awaitable[Any]]] = {
    "get_items": lambda s: s.get_items(),
    "get_items(limit)": lambda s: s.get_items(limit=1),
    "add_items": lambda s: s.add_items(said("x")),
    "pop_item": lambda s: s.pop_item(),
    "clear_session": lambda s: s.clear_session(),
    "atomic_replace": lambda s: s._atomic_replace_items(said("y")),
    "compaction_snapshot": lambda s: s._get_compaction_snapshot(1),
}


async def test_adp7_every_method_fails_within_the_deadline_on_a_frozen_server(
    frozen_redis: Frozen,
) -> None:
    url, freeze, thaw = frozen_redis
    async with RedisStateStore(url, operation_timeout=TIMEOUT, connect_timeout=TIMEOUT) as store:
        used = HelixSession("s", store)  # has checked the session and counted its rows
        await used.add_items(said("a"))
        freeze()

        async def fails_in_time(name: str, session: HelixSession) -> None:
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError) as caught:
                await CALLS[name](session)
            took = time.monotonic() - started
            assert caught.value.retryable and caught.value.code == "state_unavailable"
            assert took < TIMEOUT + SLACK, (name, took)

        # All at once (each on its own connection), so the test takes one deadline, not 21.
        await asyncio.gather(
            *(
                fails_in_time(name, session)
                for name in CALLS
                for session in (used, HelixSession("s", store), HelixSession("new", store))
            )
        )
        thaw()
        # The store recovers (what the frozen server got meanwhile, it may run on waking).
        after = HelixSession("after", store)
        await after.add_items(said("b"))
        assert await after.get_items() == said("b")
