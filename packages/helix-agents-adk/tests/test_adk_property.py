"""ADP-4/ADP-5 as a property, on every backend: any event or state is exact or refused.

Hostile values (contract_tests' strategy: deep, wide, NaN and infinity, lone surrogates,
NUL, huge integers and text) and values JSON turns into something else (tuples, sets,
bytes, datetimes, integer keys) go into an event's metadata, a function call's arguments,
a text part, a state delta of each scope, or a new session's state. Either the session
reads back with equal events and state of the same JSON types, or the call raises
``AdkValidationError`` and the store is as it was. Which of the two is also predicted,
from docs/limits.md (``json_ok``), so a service that refuses too much fails too.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC
from typing import Any

import pytest
from adk_around import APP, sid_of, snapshot
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from helix_backends import BACKENDS, Stores
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from helix_agents.adk import AdkValidationError, HelixSessionService
from helix_agents.contract._hostile import ODD_TEXT, hostile_ids, hostile_json, json_ok, same_json
from helix_agents.core import SessionStateStore

# Values JSON would hand back as something else, alone or inside JSON.
_changed_by_json = st.one_of(
    st.binary(max_size=4),
    st.tuples(st.integers(), st.text(max_size=2)),
    st.frozensets(st.integers(), max_size=2),
    st.datetimes(timezones=st.just(UTC)),
    st.dictionaries(st.integers(), st.integers(), min_size=1, max_size=2),
)
VALUES = st.one_of(
    hostile_json,
    _changed_by_json,
    st.lists(_changed_by_json, min_size=1, max_size=2),
    st.dictionaries(st.text(max_size=3), _changed_by_json, min_size=1, max_size=2),
)
TEXTS = st.one_of(st.sampled_from(ODD_TEXT), st.text(st.characters(exclude_categories=())))
PLACES = ("metadata", "args", "text", "state", "app:", "user:", "create")
PROFILE = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


def storable(value: Any, place: str) -> bool:
    """Whether docs/limits.md stores ``value`` at ``place`` (each event field is one value)."""
    if place == "metadata":
        return json_ok({"v": value})
    if place in ("args", "text"):  # content → parts → part → call → args → v
        return json_ok({"parts": [{"call": {"args": {"v": value}}}]})
    if place == "create":  # a state's value is checked in its map, as core checks it
        return json_ok({"k": value})
    return json_ok({"state_delta": {"k": value}})  # actions → state_delta → k


def carrying(value: Any, place: str) -> Event:
    """An event holding ``value`` at ``place``."""
    if place == "metadata":
        return Event(author="agent", custom_metadata={"v": value})
    if place == "args":
        call = types.FunctionCall(name="tool", args={})
        assert call.args is not None
        call.args["v"] = value
        return Event(author="agent", content=types.Content(parts=[types.Part(function_call=call)]))
    if place == "text":
        return Event(author="user", content=types.Content(parts=[types.Part(text=value)]))
    key = "k" if place == "state" else f"{place}k"
    return Event(author="agent", actions=EventActions(state_delta={key: value}))


async def exact_or_refused(
    service: HelixSessionService, store: SessionStateStore, value: Any, place: str
) -> None:
    session_id = uuid.uuid4().hex
    sid = sid_of("ada", session_id)
    refused: AdkValidationError | None = None
    if place == "create":
        before = await snapshot(store, sid)
        session = None
        try:
            session = await service.create_session(
                app_name=APP, user_id="ada", session_id=session_id, state={"k": value}
            )
        except AdkValidationError as exc:
            refused = exc
    else:
        session = await service.create_session(app_name=APP, user_id="ada", session_id=session_id)
        before = await snapshot(store, sid)
        try:
            await service.append_event(session, carrying(value, place))
        except AdkValidationError as exc:
            refused = exc
    event(f"{place}: {'refused' if refused else 'stored'}")
    note(f"refused: {refused}")
    assert (refused is None) == storable(value, place), refused
    if refused is not None:
        assert refused.session_id == sid and await snapshot(store, sid) == before
        assert session is None or session.events == []
        return
    assert session is not None
    stored = await service.get_session(app_name=APP, user_id="ada", session_id=session_id)
    assert stored is not None
    assert stored.events == session.events
    assert same_json(stored.state, session.state)


@pytest.mark.parametrize("stores", BACKENDS, indirect=True)
def test_adp4_adp5_any_event_or_state_is_exact_or_refused(stores: Stores) -> None:
    with asyncio.Runner() as runner:
        store = stores.store("main")
        runner.run(store.__aenter__())
        try:
            service = HelixSessionService(store)

            @PROFILE
            @given(VALUES, st.sampled_from(PLACES), TEXTS)
            def prop(value: Any, place: str, text: str) -> None:
                if place == "text":
                    value = text
                runner.run(exact_or_refused(service, store, value, place))

            prop()
        finally:
            runner.run(store.__aexit__(None, None, None))


async def names_work_or_are_refused(service: HelixSessionService, names: dict[str, Any]) -> None:
    try:
        created = await service.create_session(**names, state={"k": 1, "user:u": 2})
    except AdkValidationError as exc:
        refused: AdkValidationError | None = exc
    else:
        refused = None
    event(f"names: {'refused' if refused else 'stored'}")
    if refused is not None:
        note(f"refused: {refused}")
        with pytest.raises(AdkValidationError):
            await service.get_session(**names)
        return
    assert (created.app_name, created.user_id, created.id) == tuple(names.values())
    await service.append_event(created, said_by(names["user_id"]))
    stored = await service.get_session(**names)
    assert stored is not None and stored.events == created.events
    assert stored.state == {"k": 1, "user:u": 2}
    app, user = names["app_name"], names["user_id"]
    listed = (await service.list_sessions(app_name=app, user_id=user)).sessions
    assert [s.id for s in listed] == [created.id]
    assert created.id in [s.id for s in (await service.list_sessions(app_name=app)).sessions]
    await service.delete_session(**names)
    assert await service.get_session(**names) is None


def said_by(user: str) -> Event:
    return Event(author="user", content=types.Content(parts=[types.Part(text=user)]))


@pytest.mark.parametrize("stores", BACKENDS, indirect=True)
def test_adp4_any_names_work_or_are_refused(stores: Stores) -> None:
    with asyncio.Runner() as runner:
        store = stores.store("main")
        runner.run(store.__aenter__())
        try:
            service = HelixSessionService(store)

            @settings(PROFILE, max_examples=30)
            @given(hostile_ids, hostile_ids, hostile_ids)
            def prop(app: str, user: str, session: str) -> None:
                names = {"app_name": app, "user_id": user, "session_id": session or "s"}
                runner.run(names_work_or_are_refused(service, names))

            prop()
        finally:
            runner.run(store.__aexit__(None, None, None))
