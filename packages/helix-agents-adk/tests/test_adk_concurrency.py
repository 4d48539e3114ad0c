"""Concurrent runs on our service: history never corrupted, user state never lost, one creator.

ADK's in-memory service has no stale-session check, so these run on ours only.
"""

from __future__ import annotations

import asyncio

import pytest
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.sessions import BaseSessionService
from helix_backends import BACKENDS
from test_adk_contract import APP, said, texts

from helix_agents.adk import HelixSessionService

# Our service on each backend; ADK's own is left out.
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]


async def test_two_runs_from_one_read_land_exactly_one_event(
    service: BaseSessionService, other_service: BaseSessionService
) -> None:
    assert isinstance(service, HelixSessionService)
    await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    for round_ in range(5):
        one = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
        two = await other_service.get_session(app_name=APP, user_id="ada", session_id="s1")
        assert one is not None and two is not None
        results = await asyncio.gather(
            service.append_event(one, said("agent", f"one-{round_}", k=f"one-{round_}")),
            other_service.append_event(two, said("agent", f"two-{round_}", k=f"two-{round_}")),
            return_exceptions=True,
        )
        refused = [r for r in results if isinstance(r, BaseException)]
        assert len(refused) == 1 and isinstance(refused[0], StaleSessionError), results
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None and len(stored.events) == 5
    # The state is the last landed event's: no delta of a refused event slipped in.
    assert stored.state == {"k": texts(stored)[-1]}


async def test_writers_that_reread_on_stale_lose_and_double_nothing(
    service: BaseSessionService, other_service: BaseSessionService
) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="s1")

    async def writer(svc: BaseSessionService, name: str) -> None:
        for n in range(6):
            while True:
                session = await svc.get_session(app_name=APP, user_id="ada", session_id="s1")
                assert session is not None
                try:
                    await svc.append_event(session, said("agent", f"{name}-{n}"))
                    break
                except StaleSessionError:
                    await asyncio.sleep(0)

    await asyncio.gather(*(writer(s, f"w{i}") for i, s in enumerate([service, other_service] * 2)))
    stored = texts(await service.get_session(app_name=APP, user_id="ada", session_id="s1"))
    assert sorted(stored) == sorted(f"w{i}-{n}" for i in range(4) for n in range(6))
    for i in range(4):
        mine = [t for t in stored if t.startswith(f"w{i}-")]
        assert mine == [f"w{i}-{n}" for n in range(6)]


async def test_concurrent_user_state_deltas_are_not_lost(
    service: BaseSessionService, other_service: BaseSessionService
) -> None:
    services = [service, other_service] * 3
    sessions = [
        await svc.create_session(app_name=APP, user_id="ada", session_id=f"s{i}")
        for i, svc in enumerate(services)
    ]

    async def run(i: int) -> None:
        for n in range(4):
            event = said("agent", "x", **{f"user:s{i}-{n}": n, f"app:s{i}-{n}": n})
            await services[i].append_event(sessions[i], event)

    await asyncio.gather(*(run(i) for i in range(len(services))))
    expected = {f"s{i}-{n}": n for i in range(len(services)) for n in range(4)}
    assert await service.get_user_state(app_name=APP, user_id="ada") == expected
    bob = await other_service.create_session(app_name=APP, user_id="bob")
    assert {k.removeprefix("app:"): v for k, v in bob.state.items()} == expected


async def test_racing_creates_of_one_id_make_one_session(
    service: BaseSessionService, other_service: BaseSessionService
) -> None:
    results = await asyncio.gather(
        *(
            svc.create_session(app_name=APP, user_id="ada", session_id="s1", state={"by": i})
            for i, svc in enumerate([service, other_service] * 3)
        ),
        return_exceptions=True,
    )
    created = [r for r in results if not isinstance(r, BaseException)]
    assert len(created) == 1
    assert all(isinstance(r, AlreadyExistsError) for r in results if r not in created)
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None and stored.state == created[0].state
