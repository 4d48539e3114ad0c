"""ADK's memory-service contract, restated from its docstrings (docs/integrations/adk.md).

ADK ships no tests in its sdist, so each test here runs the same assertions on ADK's own
``InMemoryMemoryService`` — passing there is what shows the restatement is faithful —
and on ``HelixMemoryService`` over each backend.
"""

from __future__ import annotations

import pytest
from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.sessions import Session
from google.genai import types

pytestmark = pytest.mark.anyio

APP = "trips"


def said(author: str, text: str, at: float) -> Event:
    """An event of ``author`` saying ``text`` at ``at``."""
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        timestamp=at,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def session(session_id: str, *events: Event, user_id: str = "ada") -> Session:
    """An ADK session of ``user_id`` holding ``events``."""
    return Session(id=session_id, app_name=APP, user_id=user_id, events=list(events))


def texts(found: SearchMemoryResponse) -> list[str]:
    """The text of each memory found, in order."""
    return [m.content.parts[0].text or "" for m in found.memories if m.content.parts]


async def test_search_finds_past_sessions_events_by_whole_words(
    memory: BaseMemoryService,
) -> None:
    await memory.add_session_to_memory(
        session(
            "s1",
            said("user", "My cat is called Mistigri", 1000.0),
            said("model", "A fine name for a cat!", 1001.0),
            Event(author="model", timestamp=1002.0),  # no content: never a memory
        )
    )
    await memory.add_session_to_memory(session("s2", said("user", "Book a train to Lyon", 2000.0)))
    found = await memory.search_memory(app_name=APP, user_id="ada", query="What is my CAT called?")
    # Most shared words first: "my", "cat", "is", "called" against "cat" alone.
    assert texts(found) == ["My cat is called Mistigri", "A fine name for a cat!"]
    first = found.memories[0]
    assert first.author == "user" and first.id and first.timestamp
    assert texts(await memory.search_memory(app_name=APP, user_id="ada", query="lyon")) == [
        "Book a train to Lyon"
    ]
    # A part of a word is not a word; a query without words finds nothing.
    assert texts(await memory.search_memory(app_name=APP, user_id="ada", query="Lyo")) == []
    assert texts(await memory.search_memory(app_name=APP, user_id="ada", query="?! ")) == []
    # Memory is per app and user.
    for app, user in ((APP, "bob"), ("other", "ada")):
        assert texts(await memory.search_memory(app_name=app, user_id=user, query="cat")) == []


async def test_sessions_and_events_added_again_are_archived_once(memory: BaseMemoryService) -> None:
    first = said("user", "remember the blue door", 1.0)
    await memory.add_session_to_memory(session("s1", first))
    await memory.add_session_to_memory(session("s1", first))
    later = said("user", "the blue door is locked", 2.0)
    await memory.add_session_to_memory(session("s1", first, later))
    found = await memory.search_memory(app_name=APP, user_id="ada", query="blue door")
    assert sorted(texts(found)) == ["remember the blue door", "the blue door is locked"]
    # Events added on their own, twice, are searchable once.
    event = said("model", "the wifi password is on the fridge", 5.0)
    for _ in range(2):
        await memory.add_events_to_memory(
            app_name=APP, user_id="ada", events=[event], session_id="s9"
        )
    found = await memory.search_memory(app_name=APP, user_id="ada", query="wifi")
    assert texts(found) == ["the wifi password is on the fridge"]
    assert found.memories[0].id == event.id


async def test_at_most_ten_memories_the_best_first(memory: BaseMemoryService) -> None:
    events = [said("user", f"note {n} about tea", float(n)) for n in range(12)]
    events.append(said("user", "green tea note, loose leaf", 99.0))
    await memory.add_session_to_memory(session("s1", *events))
    found = await memory.search_memory(app_name=APP, user_id="ada", query="green tea note")
    assert len(found.memories) == 10
    # Three shared words first, then two each, oldest first among equals.
    assert texts(found)[:3] == [
        "green tea note, loose leaf",
        "note 0 about tea",
        "note 1 about tea",
    ]
