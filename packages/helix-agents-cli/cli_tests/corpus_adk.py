"""The corpus's ADK session: a turn with ``app:``, ``user:`` and session state, the state
an export must carry (docs/export.md, EXP-3)."""

from __future__ import annotations

from typing import Any

from google.adk.events import Event, EventActions
from google.adk.sessions import Session
from google.genai import types

from helix_agents.adk import HelixSessionService
from helix_agents.core import SessionStateStore

APP, USER, SESSION = "trips", "ann", "adk-1"


def said(author: str, text: str, **delta: Any) -> Event:
    """An event of ``author`` saying ``text`` with ``delta`` as its state delta."""
    return Event(
        invocation_id="inv-1",
        author=author,
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        actions=EventActions(state_delta=dict(delta)),
    )


async def adk_session(store: SessionStateStore) -> None:
    """Create the ADK session and play one turn in it."""
    service = HelixSessionService(store)
    session = await service.create_session(
        app_name=APP,
        user_id=USER,
        session_id=SESSION,
        state={"app:theme": "dark", "user:lang": "fr", "step": 1},
    )
    await service.append_event(session, said("user", "Find me a train"))
    await service.append_event(session, said("agent", "The 9:04", step=2, **{"user:seen": True}))


async def adk_view(store: SessionStateStore) -> Session:
    """The ADK session as ADK reads it."""
    found = await HelixSessionService(store).get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert found is not None
    return found


async def adk_next_turn(store: SessionStateStore) -> None:
    """The session's next turn works on the store it was moved to."""
    service = HelixSessionService(store)
    session = await adk_view(store)
    assert session.state == {"app:theme": "dark", "user:lang": "fr", "user:seen": True, "step": 2}
    before = len(session.events)
    await service.append_event(session, said("user", "Book it", **{"app:theme": "light"}))
    after = await adk_view(store)
    assert len(after.events) == before + 1
    assert after.state["app:theme"] == "light" and after.state["step"] == 2
