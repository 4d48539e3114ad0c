"""ADK's session-service contract, restated in our words (docs/integrations/adk.md).

Every test runs on ADK's own ``InMemorySessionService`` first — passing there is what
shows the restatement is faithful — and on ``HelixSessionService`` over each backend.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

pytestmark = pytest.mark.anyio

APP = "trips"


def said(author: str, text: str, *, at: float | None = None, **delta: Any) -> Event:
    """An event of ``author`` saying ``text``, carrying ``delta`` as its state delta."""
    fields: dict[str, Any] = {}
    if at is not None:
        fields["timestamp"] = at
    return Event(
        invocation_id="inv-1",
        author=author,
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        actions=EventActions(state_delta=dict(delta)),
        **fields,
    )


def texts(session: Session | None) -> list[str]:
    """The text of each event of ``session``."""
    assert session is not None
    return [e.content.parts[0].text or "" for e in session.events if e.content and e.content.parts]


async def test_create_returns_the_session_with_its_state_split_by_prefix(
    service: BaseSessionService,
) -> None:
    state = {"city": "Lyon", "app:currency": "EUR", "user:name": "Ada", "temp:draft": 1}
    session = await service.create_session(
        app_name=APP, user_id="ada", state=state, session_id="s1"
    )
    assert (session.id, session.app_name, session.user_id) == ("s1", APP, "ada")
    assert session.events == []
    assert session.state == {"city": "Lyon", "app:currency": "EUR", "user:name": "Ada"}
    again = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert again is not None and again.state == session.state
    assert await service.get_user_state(app_name=APP, user_id="ada") == {"name": "Ada"}


async def test_minted_ids_are_unique_and_given_ids_are_kept(service: BaseSessionService) -> None:
    minted = {(await service.create_session(app_name=APP, user_id="ada")).id for _ in range(20)}
    assert len(minted) == 20 and all(minted)


async def test_an_existing_id_is_refused_for_its_user_only(service: BaseSessionService) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="s1", state={"k": 1})
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    session = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert session is not None and session.state == {"k": 1}
    # The same id under another user or app is another session.
    await service.create_session(app_name=APP, user_id="bob", session_id="s1")
    await service.create_session(app_name="other", user_id="ada", session_id="s1")


async def test_a_missing_session_reads_as_none(service: BaseSessionService) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    assert await service.get_session(app_name=APP, user_id="ada", session_id="nope") is None
    assert await service.get_session(app_name=APP, user_id="bob", session_id="s1") is None
    assert await service.get_session(app_name="other", user_id="ada", session_id="s1") is None


async def test_events_are_kept_in_order_and_come_back_equal(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    sent = [said("user", "hello"), said("agent", "hi"), said("user", "bye")]
    for event in sent:
        returned = await service.append_event(session, event)
        assert returned == event
    assert session.events == sent
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None and stored.events == sent


async def test_a_rich_event_round_trips_exactly(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    call = types.FunctionCall(id="call-1", name="weather", args={"city": "Lyon", "days": [1, 2]})
    answer = types.FunctionResponse(id="call-1", name="weather", response={"t": 21.5, "n": None})
    event = Event(
        invocation_id="inv-7",
        author="planner",
        branch="root.planner",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="odd: \x00 🙂 \u2028"),
                types.Part(function_call=call),
                types.Part(function_response=answer),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\x00")),
            ],
        ),
        actions=EventActions(
            state_delta={"n": 1, "nested": {"a": [1, "x", None]}},
            artifact_delta={"report.txt": 2},
            transfer_to_agent="writer",
            escalate=False,
        ),
        long_running_tool_ids={"call-1"},
        custom_metadata={"trace": "t-1", "score": 0.25},
        turn_complete=True,
    )
    await service.append_event(session, event)
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None
    assert stored.events == [event]
    assert stored.events[0].model_dump() == event.model_dump()


async def test_state_deltas_by_scope(service: BaseSessionService) -> None:
    ada1 = await service.create_session(app_name=APP, user_id="ada", session_id="a1")
    ada2 = await service.create_session(app_name=APP, user_id="ada", session_id="a2")
    bob = await service.create_session(app_name=APP, user_id="bob", session_id="b1")
    other = await service.create_session(app_name="other", user_id="ada", session_id="o1")
    scoped: dict[str, Any] = {"app:seen": 2, "user:likes": "tea", "temp:scratch": 3}
    event = said("agent", "noted", mine=1, **scoped)
    await service.append_event(ada1, event)
    # The session object has every key, temp included, for the rest of its invocation.
    assert ada1.state["temp:scratch"] == 3
    assert {k: ada1.state[k] for k in ("mine", "app:seen", "user:likes")} == {
        "mine": 1,
        "app:seen": 2,
        "user:likes": "tea",
    }
    # temp: is never stored, not even in the stored event's delta.
    assert "temp:scratch" not in event.actions.state_delta

    async def state(session: Session) -> dict[str, object]:
        got = await service.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id
        )
        assert got is not None
        return got.state

    assert await state(ada1) == {"mine": 1, "app:seen": 2, "user:likes": "tea"}
    assert await state(ada2) == {"app:seen": 2, "user:likes": "tea"}
    assert await state(bob) == {"app:seen": 2}
    assert await state(other) == {}
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="a1")
    assert stored is not None
    assert "temp:scratch" not in stored.events[0].actions.state_delta
    assert await service.get_user_state(app_name=APP, user_id="ada") == {"likes": "tea"}
    assert await service.get_user_state(app_name=APP, user_id="bob") == {}


async def test_later_deltas_win_key_by_key(service: BaseSessionService) -> None:
    session = await service.create_session(
        app_name=APP, user_id="ada", session_id="s1", state={"a": 1, "b": 1}
    )
    await service.append_event(session, said("agent", "1", b=2, c=None, **{"user:u": 1}))
    await service.append_event(session, said("agent", "2", c=3, **{"user:u": 2}))
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None
    assert stored.state == {"a": 1, "b": 2, "c": 3, "user:u": 2}
    assert session.state == stored.state


async def test_a_partial_event_is_not_stored(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    partial = said("agent", "typ", k=1)
    partial.partial = True
    assert await service.append_event(session, partial) is partial
    assert session.events == [] and "k" not in session.state
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None and stored.events == [] and stored.state == {}


async def test_get_session_config_filters_events(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    base = time.time()
    for i in range(6):
        await service.append_event(session, said("user", f"e{i}", at=base + i))

    async def read(**config: object) -> list[str]:
        return texts(
            await service.get_session(
                app_name=APP,
                user_id="ada",
                session_id="s1",
                config=GetSessionConfig.model_validate(config),
            )
        )

    assert await read() == [f"e{i}" for i in range(6)]
    assert await read(num_recent_events=2) == ["e4", "e5"]
    assert await read(num_recent_events=10) == [f"e{i}" for i in range(6)]
    assert await read(num_recent_events=0) == []
    assert await read(after_timestamp=base + 3) == ["e3", "e4", "e5"]
    assert await read(after_timestamp=base + 2.5) == ["e3", "e4", "e5"]
    assert await read(after_timestamp=base + 100) == []
    assert await read(after_timestamp=base - 100) == [f"e{i}" for i in range(6)]
    assert await read(num_recent_events=2, after_timestamp=base + 1) == ["e4", "e5"]
    assert await read(num_recent_events=4, after_timestamp=base + 3) == ["e3", "e4", "e5"]
    with pytest.raises(ValueError, match="num_recent_events"):
        GetSessionConfig(num_recent_events=-1)


async def test_list_sessions_for_a_user_and_for_the_app(service: BaseSessionService) -> None:
    first = await service.create_session(
        app_name=APP, user_id="ada", session_id="a1", state={"k": 1}
    )
    await service.create_session(app_name=APP, user_id="ada", session_id="a2")
    await service.create_session(app_name=APP, user_id="bob", session_id="b1")
    await service.create_session(app_name="other", user_id="ada", session_id="o1")
    await service.append_event(first, said("user", "later", **{"user:n": 1, "app:m": 2}))

    ada = (await service.list_sessions(app_name=APP, user_id="ada")).sessions
    # Oldest update first: a1 was written after a2 was created.
    assert [s.id for s in ada] == ["a2", "a1"]
    assert all(s.events == [] for s in ada)
    assert ada[1].state == {"k": 1, "user:n": 1, "app:m": 2}
    assert ada[0].state == {"user:n": 1, "app:m": 2}
    everyone = (await service.list_sessions(app_name=APP)).sessions
    assert sorted((s.user_id, s.id) for s in everyone) == [
        ("ada", "a1"),
        ("ada", "a2"),
        ("bob", "b1"),
    ]
    times = [s.last_update_time for s in everyone]
    assert times == sorted(times)
    assert (await service.list_sessions(app_name="nobody")).sessions == []
    assert (await service.list_sessions(app_name=APP, user_id="carol")).sessions == []


async def test_delete_removes_the_session_and_keeps_shared_state(
    service: BaseSessionService,
) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, said("user", "x", own=1, **{"app:a": 1, "user:u": 1}))
    await service.delete_session(app_name=APP, user_id="ada", session_id="s1")
    assert await service.get_session(app_name=APP, user_id="ada", session_id="s1") is None
    assert (await service.list_sessions(app_name=APP, user_id="ada")).sessions == []
    await service.delete_session(app_name=APP, user_id="ada", session_id="s1")  # no error
    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, said("user", "y"))
    assert await service.get_user_state(app_name=APP, user_id="ada") == {"u": 1}
    fresh = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    assert fresh.events == []
    assert fresh.state == {"app:a": 1, "user:u": 1}


async def test_appending_to_a_missing_session_is_refused(service: BaseSessionService) -> None:
    ghost = Session(id="ghost", app_name=APP, user_id="ada")
    with pytest.raises(SessionNotFoundError):
        await service.append_event(ghost, said("user", "boo", k=1, **{"user:u": 1}))
    assert await service.get_user_state(app_name=APP, user_id="ada") == {}


async def test_an_equal_event_sent_twice_lands_once(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    event = said("agent", "once", **{"user:count": 1})
    await service.append_event(session, event)
    await service.append_event(session, event)
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert texts(stored) == ["once"]
