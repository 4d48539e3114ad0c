"""ADP-7: with its server frozen, the persistence's sync calls fail within the deadline.

Redis alone: a ``redis-server`` of the test's own, stopped with SIGSTOP (its sockets stay
open, it answers nothing), the way the Redis store's own tests freeze one. The calls come
from threads of their own and from a running event loop, as CrewAI makes them (CRW-5).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from helix_agents.contract.servers import RedisServers
from helix_agents.core import StoreUnavailableError
from helix_agents.crewai import HelixFlowPersistence
from helix_agents.store_redis import RedisStateStore

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine, as the Redis store's tests allow.
SLACK = 1.0


def test_adp7_save_and_load_fail_within_the_deadline_on_a_frozen_server(
    redis_servers: RedisServers,
) -> None:
    port = redis_servers.start()
    store = RedisStateStore(
        f"redis://127.0.0.1:{port}/0", operation_timeout=TIMEOUT, connect_timeout=TIMEOUT
    )
    with HelixFlowPersistence(store) as persistence:
        persistence.save_state("f", "m", {"v": 1})
        redis_servers.freeze(port)
        took: list[tuple[str, float]] = []
        calls: dict[str, Callable[[], object]] = {
            "save": lambda: persistence.save_state("f", "m", {"v": 2}),
            "load": lambda: persistence.load_state("f"),
        }

        def fails_in_time(call: str) -> None:
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError) as caught:
                calls[call]()
            assert caught.value.retryable and caught.value.code == "state_unavailable"
            took.append((call, time.monotonic() - started))

        async def on_a_loop() -> None:
            fails_in_time("load")

        threads = [threading.Thread(target=fails_in_time, args=(c,)) for c in ("save", "load")]
        for t in threads:
            t.start()
        asyncio.run(on_a_loop())
        for t in threads:
            t.join()
        assert len(took) == 3 and all(s < TIMEOUT + SLACK for _, s in took), took
        redis_servers.thaw(port)
        persistence.save_state("f", "m", {"v": 3})
        assert persistence.load_state("f") == {"v": 3}
