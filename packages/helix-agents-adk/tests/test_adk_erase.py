"""ADKF-11 (docs/integrations/adk.md): erasing one ADK user everywhere, on every backend.

Two users of one app write through ADK's services (sessions with events and state,
memory, artifacts); one is erased. Every read of that user is empty, the other user reads
as before, and the whole store's export holds the erased user's id only as the key of the
app's map of users (set to null), and none of its texts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from adk_around import APP, name, sid_of
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from helix_backends import BACKENDS

from helix_agents.adk import (
    AdkValidationError,
    HelixArtifactService,
    HelixMemoryService,
    HelixSessionService,
    erase_adk_user,
)
from helix_agents.contract.erasure_data import whole_export
from helix_agents.core import SessionStateStore
from helix_agents.core.adapters import mark
from helix_agents.core.errors import ForeignSessionError

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]

GONE, KEPT = "zoe-gone", "bob-kept"


def said(text: str, **state: Any) -> Event:
    """A user event saying ``text``, setting ``state``."""
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(author="user", content=content, actions=EventActions(state_delta=state))


async def write_user(store: SessionStateStore, user: str) -> None:
    """Three sessions of ``user`` (one deleted after it went to memory), memory, artifacts."""
    sessions = HelixSessionService(store)
    memory, artifacts = HelixMemoryService(store), HelixArtifactService(store)
    for n in (1, 2, 3):
        session = await sessions.create_session(
            app_name=APP,
            user_id=user,
            session_id=f"s{n}",
            state={"topic": f"{user} topic {n}", "user:city": f"{user} city"},
        )
        await sessions.append_event(session, said(f"{user} said secret {n}", mood=f"{user} mood"))
        await sessions.append_event(session, said(f"{user} recall {n}", **{"user:pet": "cat"}))
        await memory.add_session_to_memory(session)
        names: dict[str, Any] = {"app_name": APP, "user_id": user, "session_id": f"s{n}"}
        png = types.Part.from_bytes(data=f"{user} png {n}".encode(), mime_type="image/png")
        for _ in range(2):
            await artifacts.save_artifact(filename="map.png", artifact=png, **names)
    await sessions.delete_session(app_name=APP, user_id=user, session_id="s3")
    await memory.add_events_to_memory(app_name=APP, user_id=user, events=[said(f"{user} loose")])
    notes = types.Part(text=f"{user} notes text")
    await artifacts.save_artifact(app_name=APP, user_id=user, filename="user:n.txt", artifact=notes)
    await artifacts.delete_artifact(app_name=APP, user_id=user, session_id="s2", filename="map.png")


async def reads(store: SessionStateStore, user: str) -> dict[str, Any]:
    """Everything ADK's services read of ``user``, as plain data."""
    sessions = HelixSessionService(store)
    memory, artifacts = HelixMemoryService(store), HelixArtifactService(store)
    listed = await sessions.list_sessions(app_name=APP, user_id=user)
    got = {}
    for n in (1, 2, 3):
        found = await sessions.get_session(app_name=APP, user_id=user, session_id=f"s{n}")
        got[n] = None if found is None else found.model_dump(mode="json")
    searches = {}
    for query in ("secret", "loose", "recall"):
        hits = await memory.search_memory(app_name=APP, user_id=user, query=query)
        searches[query] = [m.model_dump(mode="json") for m in hits.memories]
    keys, loads = {}, {}
    for session_id in ("s1", "s2", "s3", None):
        keys[session_id] = await artifacts.list_artifact_keys(
            app_name=APP, user_id=user, session_id=session_id
        )
        for filename in ("map.png", "user:n.txt")[session_id is None :]:
            part = await artifacts.load_artifact(
                app_name=APP, user_id=user, session_id=session_id, filename=filename
            )
            loads[(session_id, filename)] = None if part is None else part.model_dump(mode="json")
    return {
        "listed": sorted(s.model_dump_json() for s in listed.sessions),
        "sessions": got,
        "state": await sessions.get_user_state(app_name=APP, user_id=user),
        "memory": searches,
        "keys": keys,
        "loads": loads,
    }


async def test_adkf11_erasing_a_user_leaves_only_its_registry_key_set_to_null(
    store: SessionStateStore,
) -> None:
    for user in (GONE, KEPT):
        await write_user(store, user)
    before = await reads(store, GONE)
    assert before["sessions"][1] is not None and before["state"] == {
        "city": f"{GONE} city",
        "pet": "cat",
    }
    assert before["memory"]["secret"] and before["memory"]["loose"] and before["keys"]["s1"]
    assert len(before["memory"]["secret"]) == 3  # s3's memory outlived the session
    kept = await reads(store, KEPT)
    exported = json.dumps([json.loads(line) for line in await whole_export(store)])
    assert GONE in exported and f"{GONE} said secret 3" in exported

    sides = [name(APP, GONE, None, "artifacts"), name(APP, GONE, None, "memory")]
    erased = await erase_adk_user(store, APP, GONE)
    assert erased == sorted([sid_of(GONE, "s1"), sid_of(GONE, "s2"), *sides])

    after = await reads(store, GONE)
    assert after["listed"] == [] and after["state"] == {}
    assert set(after["sessions"].values()) == {None}
    assert after["memory"] == {"secret": [], "loose": [], "recall": []}
    assert set(map(tuple, after["keys"].values())) == {()}
    assert list(after["loads"].values()) == [None] * 7
    assert await reads(store, KEPT) == kept
    everyone = await HelixSessionService(store).list_sessions(app_name=APP)
    assert {s.user_id for s in everyone.sessions} == {KEPT}

    records = [json.loads(line) for line in await whole_export(store)]
    holding = [r for r in records if GONE in json.dumps(r)]
    registry = {
        "type": "scoped",
        "scope": "app",
        "owner": name(APP, None),
        "values": {json.dumps(GONE): None, json.dumps(KEPT): True},
    }
    assert holding == [registry]
    assert "said secret" in json.dumps(records)  # the kept user's texts are there
    for text in ("said secret", "recall", "loose", "topic", "city", "mood", "notes text", "png"):
        assert f"{GONE} {text}" not in json.dumps(records)
    assert await erase_adk_user(store, APP, GONE) == []  # a retry finds nothing


async def test_adkf11_a_foreign_side_session_or_a_bad_name_is_refused_with_nothing_erased(
    store: SessionStateStore,
) -> None:
    sessions = HelixSessionService(store)
    await sessions.create_session(app_name=APP, user_id=GONE, session_id="s1")
    await store.create_session(name(APP, GONE, None, "memory"), metadata=mark("langgraph"))
    with pytest.raises(ForeignSessionError):
        await erase_adk_user(store, APP, GONE)
    with pytest.raises(AdkValidationError, match="user_id must be a string"):
        await erase_adk_user(store, APP, 7)  # type: ignore[arg-type]
    assert await sessions.get_session(app_name=APP, user_id=GONE, session_id="s1") is not None
    registry = await store.get_scoped_state("app", name(APP, None))
    assert registry == {json.dumps(GONE): True}
