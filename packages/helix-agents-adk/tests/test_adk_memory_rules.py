"""Our memory rules, ADKM-1..4 (docs/integrations/adk.md), on every backend.

The archive is read around the service, through the store, by the names the docs give.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from adk_around import APP, name, sid_of
from google.adk.events.event import Event
from google.adk.sessions import Session
from google.genai import types
from helix_backends import BACKENDS, Stores

from helix_agents.adk import EVENT_FIELD, AdkValidationError, HelixMemoryService
from helix_agents.core import SessionStateStore
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.core.errors import ForeignSessionError

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]

ARCHIVE = name(APP, "ada", None, "memory")


def said(text: str, **fields: object) -> Event:
    """A user event saying ``text``."""
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(author="user", content=content, **fields)


async def test_adkm1_the_archive_adkm4_refusals_and_adkm3_reading_hits_back(
    store: SessionStateStore,
) -> None:
    memory = HelixMemoryService(store)
    kept = said("the key is under the mat")
    await memory.add_session_to_memory(Session(id="s1", app_name=APP, user_id="ada", events=[kept]))
    info = await store.get_session(ARCHIVE)
    assert info is not None and info.metadata[ADAPTER_KEY] == "adk" and info.message_count == 1
    [row] = await store.get_messages(ARCHIVE)
    assert row.content == "the key is under the mat"
    assert Event.model_validate_json(str((row.__pydantic_extra__ or {})[EVENT_FIELD])) == kept
    owner = name(APP, "ada", "s1", "memory")
    assert await store.get_scoped_state("user", owner) == {"events": [kept.id]}

    bad = said("nan", custom_metadata={"score": math.nan})
    with pytest.raises(AdkValidationError) as refused:
        await memory.add_session_to_memory(
            Session(id="s1", app_name=APP, user_id="ada", events=[kept, said("fine"), bad])
        )
    assert refused.value.session_id == ARCHIVE
    await store.create_session(sid_of("ada", "theirs"), metadata=mark("langgraph"))
    with pytest.raises(ForeignSessionError):
        await memory.add_session_to_memory(
            Session(id="theirs", app_name=APP, user_id="ada", events=[said("x")])
        )
    assert (await store.get_session(ARCHIVE)).message_count == 1  # type: ignore[union-attr]
    assert await store.get_scoped_state("user", owner) == {"events": [kept.id]}

    # ADKM-3: hits far apart come back from pages of their own, ranked as ADK ranks.
    fillers = [said(f"filler {n}") for n in range(60)]
    first, last = said("Paris in spring"), said("paris again, in autumn")
    events = [first, *fillers, last]
    await memory.add_session_to_memory(Session(id="s2", app_name=APP, user_id="ada", events=events))
    found = await memory.search_memory(app_name=APP, user_id="ada", query="PARIS")
    # Rows far apart come back from their own pages; equal scores oldest first.
    assert [m.id for m in found.memories] == [first.id, last.id]
    assert found.memories[1].content == last.content


async def test_adkm2_adds_from_two_stores_at_once_archive_each_event_once(stores: Stores) -> None:
    events = [said(f"fact number {n}") for n in range(6)]
    async with stores.store("main") as one, stores.store("main") as two:
        services = [HelixMemoryService(one), HelixMemoryService(two)]
        adds = [
            services[n % 2].add_session_to_memory(
                Session(id="s1", app_name=APP, user_id="ada", events=events[: 2 + n])
            )
            for n in range(4)
        ]
        await asyncio.gather(*adds)
        rows = await one.get_messages(ARCHIVE)
        assert sorted(str(r.content) for r in rows) == sorted(f"fact number {n}" for n in range(5))
        found = await services[1].search_memory(app_name=APP, user_id="ada", query="fact")
        assert len(found.memories) == 5
