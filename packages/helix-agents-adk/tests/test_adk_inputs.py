"""ADP-4 and ADP-5 (docs/integrations/sharing.md): exact or refused, nothing written.

Each refusal is checked for its type (core's ValidationError, and the ValueError and
TypeError ADK's own services raise), its code, the session it names, and a store left
as it was; each acceptance for an event and a state that come back equal.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from adk_around import APP, name, sid_of, snapshot
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.adk.tools.load_memory_tool import LoadMemoryResponse
from google.genai import types
from helix_backends import BACKENDS
from pydantic import BaseModel
from test_adk_contract import said

from helix_agents.adk import AdkValidationError, HelixSessionService
from helix_agents.contract._hostile import same_json
from helix_agents.core import SessionStateStore, ValidationError

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]


def deep(depth: int) -> Any:
    """A value ``depth`` levels of objects and arrays deep."""
    value: Any = 0
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


class Opaque:
    """A value JSON cannot hold."""


# Values no JSON store gives back equal, and what each comes back as, if anything.
REFUSED: dict[str, Any] = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "nan deep inside": {"a": [1, {"b": math.nan}]},
    "lone surrogate": "x\udcffy",
    "lone surrogate key": {"\ud800": 1},
    "bytes": b"\xff\xfe",
    "tuple": (1, 2),
    "integer key": {1: "one"},
    "set": {1, 2},
    "datetime": datetime(2026, 1, 2, tzinfo=UTC),
    "object": Opaque(),
    "too deep": deep(150),
    "too big an integer": 10**600,
}
# Values at the edges that must come back exactly.
KEPT: dict[str, Any] = {
    "deepest": deep(95),
    "big integer": -(10**599),
    "negative zero": -0.0,
    "smallest float": 5e-324,
    "odd text": "\x00 \u2028 \ufeff e\u0301 \U0001f600 \uffff",
    "int and float": [1, 1.0, True, None],
    "empty": {"": [], "x": {}},
}


def assert_refusal(err: BaseException, sid: str) -> None:
    assert isinstance(err, AdkValidationError)
    assert isinstance(err, ValidationError) and isinstance(err, ValueError)
    assert isinstance(err, TypeError)
    assert err.code == "validation_error" and not err.retryable
    assert err.session_id == sid and sid in str(err)


def carrying(value: Any, where: str) -> Event:
    """An event with ``value`` in its metadata, its state delta or a function call's args."""
    event = said("agent", "bad")
    if where == "custom_metadata":
        event.custom_metadata = {"v": value}
    elif where == "state_delta":
        event.actions.state_delta = {"k": value, "user:u": 1, "app:a": 1}
    else:
        call = types.FunctionCall(name="tool", args={"v": 0})
        assert call.args is not None
        call.args["v"] = value
        event.content = types.Content(role="model", parts=[types.Part(function_call=call)])
    return event


@pytest.mark.parametrize("label", list(REFUSED))
async def test_adp4_an_event_that_would_not_come_back_equal_is_refused(
    service: HelixSessionService, store: SessionStateStore, label: str
) -> None:
    sid = sid_of("ada", "s1")
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, said("user", "before", k=0))
    before = await snapshot(store, sid)
    for where in ("custom_metadata", "state_delta", "function_args"):
        event = carrying(REFUSED[label], where)
        with pytest.raises(AdkValidationError) as refused:
            await service.append_event(session, event)
        assert_refusal(refused.value, sid)
        assert await snapshot(store, sid) == before
        assert len(session.events) == 1 and session.state == {"k": 0}


@pytest.mark.parametrize("label", list(REFUSED))
async def test_adp4_a_create_refused_for_its_state_leaves_no_session(
    service: HelixSessionService, store: SessionStateStore, label: str
) -> None:
    sid = sid_of("ada", "s1")
    before = await snapshot(store, sid)
    for prefix in ("", "app:", "user:"):
        state = {"fine": 1, f"{prefix}bad": REFUSED[label]}
        with pytest.raises(AdkValidationError) as refused:
            await service.create_session(app_name=APP, user_id="ada", session_id="s1", state=state)
        assert_refusal(refused.value, sid)
        assert before["session"] is None and await snapshot(store, sid) == before
    assert (await service.list_sessions(app_name=APP)).sessions == []


@pytest.mark.parametrize(
    "state",
    [{1: "x"}, {"app:": 1}, {"user:": 1}, {"k\x00": 1}, {"x" * 600: 1}, ["k"]],
    ids=["int key", "empty app key", "empty user key", "NUL key", "long key", "not a dict"],
)
async def test_adp4_state_keys_are_checked_before_the_create(
    service: HelixSessionService, store: SessionStateStore, state: Any
) -> None:
    sid = sid_of("ada", "s1")
    with pytest.raises(AdkValidationError) as refused:
        await service.create_session(app_name=APP, user_id="ada", session_id="s1", state=state)
    assert_refusal(refused.value, sid)
    assert await store.get_session(sid) is None
    assert await store.get_scoped_state("app", name(APP, None)) == {}


async def test_adp4_names_json_cannot_key_are_refused_before_any_write(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    for names in (
        {"app_name": APP, "user_id": "ada", "session_id": "x" * 600},
        {"app_name": APP, "user_id": "\ud800", "session_id": "s"},
        {"app_name": 7, "user_id": "ada", "session_id": "s"},
    ):
        with pytest.raises(AdkValidationError):
            await service.create_session(**names)
        with pytest.raises(AdkValidationError):
            await service.get_session(**names)
        with pytest.raises(AdkValidationError):
            await service.delete_session(**names)
    assert (await store.list_sessions(name(APP, "ada"))).sessions == ()


async def test_adp4_temp_state_is_never_stored_so_never_checked(
    service: HelixSessionService,
) -> None:
    session = await service.create_session(
        app_name=APP, user_id="ada", session_id="s1", state={"temp:t": Opaque()}
    )
    opaque = Opaque()
    temp: dict[str, Any] = {"temp:scratch": opaque}
    await service.append_event(session, said("agent", "x", k=1, **temp))
    assert session.state["temp:scratch"] is opaque
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None and stored.state == {"k": 1}


@pytest.mark.parametrize("label", list(KEPT))
async def test_adp5_values_at_the_edges_come_back_equal(
    service: HelixSessionService, label: str
) -> None:
    value = KEPT[label]
    session = await service.create_session(
        app_name=APP, user_id="ada", session_id="s1", state={"c": value, "user:c": value}
    )
    event = Event(
        author="agent",
        custom_metadata={"v": value},
        actions=EventActions(state_delta={"e": value, "app:e": value}),
    )
    await service.append_event(session, event)
    stored = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert stored is not None
    assert stored.events == [event]
    assert stored.state == {"c": value, "user:c": value, "e": value, "app:e": value}
    assert same_json(stored.state, session.state)  # of the same types: 1.0 stays a float


async def test_adp4_a_refused_event_leaves_a_hand_built_session_object_untouched(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    by_hand = Session(id="s1", app_name=APP, user_id="ada")
    event = said("agent", "x", k=math.inf, **{"temp:t": 1})
    with pytest.raises(AdkValidationError):
        await service.append_event(by_hand, event)
    assert by_hand.state == {} and by_hand.events == []
    assert "temp:t" in event.actions.state_delta  # not trimmed: nothing happened
    assert await store.get_message_count(sid_of("ada", "s1")) == 0


@pytest.mark.parametrize(
    "delta", [{1: "x"}, ["k"], {"temp:t": 1, 2: 2}], ids=["int key", "a list", "temp and int"]
)
async def test_adp4_a_state_delta_set_after_construction_is_checked_too(
    service: HelixSessionService, store: SessionStateStore, delta: Any
) -> None:
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    event = said("agent", "x")
    event.actions.state_delta = delta  # pydantic does not check assignments to ADK's models
    with pytest.raises(AdkValidationError) as refused:
        await service.append_event(session, event)
    assert_refusal(refused.value, sid_of("ada", "s1"))
    assert await store.get_message_count(sid_of("ada", "s1")) == 0


def answered(response: dict[str, Any]) -> Event:
    """A tool's answer event carrying ``response``."""
    event = said("agent", "answer")
    answer = types.FunctionResponse(id="call-1", name="load_memory", response=response)
    event.content = types.Content(role="user", parts=[types.Part(function_response=answer)])
    return event


async def test_adp4_a_model_a_tool_returned_is_kept_as_its_json_form(
    service: HelixSessionService,
) -> None:
    memories = LoadMemoryResponse(
        memories=[MemoryEntry(content=types.Content(parts=[types.Part(text="Ada likes tea")]))]
    )
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, answered({"result": memories}))
    again = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert again is not None
    content = again.events[0].content
    assert content is not None and content.parts
    part = content.parts[0]
    assert part.function_response is not None
    # What ADK's database service gives back, and what the model is sent: the JSON form.
    assert part.function_response.response == {"result": memories.model_dump(mode="json")}
    # A model whose JSON form cannot be written is refused, as a plain value is.
    with pytest.raises(AdkValidationError):
        await service.append_event(session, answered({"result": Holder(value=Opaque())}))
    assert len(session.events) == 1


class Holder(BaseModel):
    """A tool's answer holding any value."""

    value: Any
