"""ADP-7 (docs/integrations/sharing.md): a frozen server fails every method in time.

A Redis server of the test's own is frozen with SIGSTOP (its sockets stay open, it
answers nothing): each of the service's methods raises ``StoreUnavailableError``
(retryable) within the store's ``operation_timeout``, not after the default 10 s.
The other backends' own tests freeze their servers the same way; the service adds
no wait of its own, so one backend shows it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from adk_around import APP
from google.adk.sessions import Session
from test_adk_contract import said

from helix_agents.adk import HelixSessionService
from helix_agents.contract.servers import RedisServers
from helix_agents.core import StoreUnavailableError
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
# Scheduling slack on a busy two-core machine; far under the 10 s default.
SLACK = 1.5


async def fails_in_time(call: Awaitable[Any]) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        await call
    took = time.monotonic() - started
    assert took < TIMEOUT + SLACK, took
    assert caught.value.retryable and caught.value.code == "state_unavailable"


async def test_adp7_every_method_fails_in_time_on_a_frozen_server(
    redis_servers: RedisServers,
) -> None:
    port = redis_servers.start()
    async with RedisStateStore(f"redis://127.0.0.1:{port}/0", operation_timeout=TIMEOUT) as store:
        service = HelixSessionService(store)
        session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
        await service.append_event(session, said("user", "hi", k=1))
        by_hand = Session(id="s1", app_name=APP, user_id="ada")
        calls: list[Callable[[], Awaitable[Any]]] = [
            lambda: service.create_session(app_name=APP, user_id="ada", state={"k": 1}),
            lambda: service.get_session(app_name=APP, user_id="ada", session_id="s1"),
            lambda: service.list_sessions(app_name=APP, user_id="ada"),
            lambda: service.list_sessions(app_name=APP),
            lambda: service.get_user_state(app_name=APP, user_id="ada"),
            lambda: service.append_event(session, said("agent", "x", **{"user:u": 1})),
            lambda: service.append_event(by_hand, said("agent", "y")),
            lambda: service.delete_session(app_name=APP, user_id="ada", session_id="s1"),
        ]
        redis_servers.freeze(port)
        try:
            for call in calls:
                await fails_in_time(call())
        finally:
            redis_servers.thaw(port)
        # Once the server answers again, so does the service.
        again = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
        assert again is not None
