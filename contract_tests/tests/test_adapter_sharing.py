"""Every pair of adapters on one store (docs/integrations/sharing.md, ADP-1..ADP-3).

One adapter writes a session; another, given the same store id, finds nothing there,
cannot write it, and leaves it as it was. A session the application made through the
store is shared: each adapter reads it without tripping over the others' rows.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_framework import Message
from google.adk.events import Event
from google.genai import types
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from helix_agents.adk import HelixSessionService
from helix_agents.agent_framework import HelixHistoryProvider
from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore, open_store
from helix_agents.core.adapters import ADAPTER_KEY
from helix_agents.core.errors import ForeignSessionError
from helix_agents.core.messages import dump_message
from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.mcp import HelixEventStore
from helix_agents.openai_agents import HelixSession
from helix_agents.pydantic_ai import HelixHistory

pytestmark = pytest.mark.anyio

APP, USER, NAME = "app", "ada", "s1"
# The store id ADK gives (app, user, session): the others are handed the same id.
SID = f'["{APP}","{USER}","{NAME}"]'
CONFIG: RunnableConfig = {"configurable": {"thread_id": SID, "checkpoint_ns": ""}}


@dataclass(frozen=True)
class Adapter:
    """What a test asks of one adapter, on the session :data:`SID`."""

    name: str
    write: Callable[[SessionStateStore], Awaitable[None]]
    sees_nothing: Callable[[SessionStateStore], Awaitable[bool]]


async def _sdk_write(store: SessionStateStore) -> None:
    await HelixSession(SID, store).add_items([{"role": "user", "content": "hi"}])


async def _sdk_sees_nothing(store: SessionStateStore) -> bool:
    return await HelixSession(SID, store).get_items() == []


async def _graph_write(store: SessionStateStore) -> None:
    await HelixCheckpointSaver(store).aput(CONFIG, empty_checkpoint(), {"step": 0}, {})


async def _graph_sees_nothing(store: SessionStateStore) -> bool:
    saver = HelixCheckpointSaver(store)
    listed = [c async for c in saver.alist(CONFIG)]
    return await saver.aget_tuple(CONFIG) is None and listed == []


async def _adk_write(store: SessionStateStore) -> None:
    service = HelixSessionService(store)
    session = await service.get_session(app_name=APP, user_id=USER, session_id=NAME)
    if session is None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id=NAME)
    text = types.Content(role="user", parts=[types.Part(text="hi")])
    await service.append_event(session, Event(author="user", content=text))


async def _adk_sees_nothing(store: SessionStateStore) -> bool:
    service = HelixSessionService(store)
    found = await service.get_session(app_name=APP, user_id=USER, session_id=NAME)
    listed = await service.list_sessions(app_name=APP, user_id=USER)
    return found is None and listed.sessions == []


async def _pai_write(store: SessionStateStore) -> None:
    history = HelixHistory(store, SID)
    await history.load()
    await history.save(
        [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])]
    )


async def _pai_sees_nothing(store: SessionStateStore) -> bool:
    return await HelixHistory(store, SID).load() == []


async def _maf_write(store: SessionStateStore) -> None:
    provider, state = HelixHistoryProvider(store), dict[str, object]()
    await provider.get_messages(SID, state=state)
    await provider.save_messages(
        SID, [Message("user", ["hi"]), Message("assistant", ["hello"])], state=state
    )


async def _maf_sees_nothing(store: SessionStateStore) -> bool:
    return await HelixHistoryProvider(store).get_messages(SID) == []


ADAPTERS = {
    "openai-agents": Adapter("openai-agents", _sdk_write, _sdk_sees_nothing),
    "langgraph": Adapter("langgraph", _graph_write, _graph_sees_nothing),
    "adk": Adapter("adk", _adk_write, _adk_sees_nothing),
    "pydantic-ai": Adapter("pydantic-ai", _pai_write, _pai_sees_nothing),
    "agent-framework": Adapter("agent-framework", _maf_write, _maf_sees_nothing),
}
PAIRS = [(a, b) for a in ADAPTERS for b in ADAPTERS if a != b]


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStateStore]:
    """A store of the test's own on each backend."""
    space = f"share_{uuid.uuid4().hex[:10]}"
    url = "memory://"
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'shared.db'}"
    elif request.param in ("postgres", "redis"):
        url = str(request.getfixturevalue(f"helix_{request.param}_url"))
    options: dict[str, Any] = {"auto_migrate": True} if request.param == "postgres" else {}
    namespace = space if request.param in ("postgres", "redis") else None
    async with open_store(url, namespace=namespace, **options) as opened:
        yield opened
        await opened.delete_session(SID)


async def _snapshot(store: SessionStateStore) -> tuple[object, ...]:
    info = await store.get_session(SID)
    assert info is not None
    rows = [dump_message(m) for m in await store.get_messages(SID)]
    checkpoints = [c.checkpoint_id for c in await store.list_checkpoints(SID)]
    return info.metadata, info.message_count, rows, checkpoints


@pytest.mark.parametrize(("owner", "other"), PAIRS)
async def test_adp1_adp2_a_session_is_its_writers_alone(
    store: SessionStateStore, owner: str, other: str
) -> None:
    await ADAPTERS[owner].write(store)
    info = await store.get_session(SID)
    assert info is not None and info.metadata[ADAPTER_KEY] == owner  # ADP-1
    before = await _snapshot(store)
    assert await ADAPTERS[other].sees_nothing(store)  # ADP-2: not there for reads
    with pytest.raises(ForeignSessionError) as caught:
        await ADAPTERS[other].write(store)
    err = caught.value
    assert (err.code, err.session_id, err.owner, err.adapter) == (
        "state_foreign_session",
        SID,
        owner,
        other,
    )
    assert await _snapshot(store) == before  # nothing written
    assert not await ADAPTERS[owner].sees_nothing(store)  # the owner still has it


async def test_adp3_a_shared_session_is_read_by_every_adapter(store: SessionStateStore) -> None:
    await store.create_session(SID, user_id=f'["{APP}","{USER}"]')
    await store.append_messages(
        SID, MessageCommit(messages=(ChatMessage(role="user", content="from the app"),))
    )
    for adapter in ADAPTERS.values():  # each writes its own, in turn, and none trips
        await adapter.write(store)
    info = await store.get_session(SID)
    assert info is not None and ADAPTER_KEY not in info.metadata
    items = await HelixSession(SID, store).get_items()
    assert items == [{"role": "user", "content": "hi"}]  # only the SDK's own item
    saver = HelixCheckpointSaver(store)
    assert (await saver.aget_tuple(CONFIG)) is not None
    service = HelixSessionService(store)
    session = await service.get_session(app_name=APP, user_id=USER, session_id=NAME)
    assert session is not None
    assert [e.content.parts[0].text for e in session.events if e.content and e.content.parts] == [
        "hi"
    ]  # only the ADK event, not the app's row or the SDK's item
    history = await HelixHistory(store, SID).load()
    assert [type(m) for m in history] == [ModelRequest, ModelResponse]  # only its own rows
    messages = await HelixHistoryProvider(store).get_messages(SID)
    assert [m.text for m in messages] == ["hi", "hello"]  # only its own rows


async def _replayed(events: HelixEventStore, last_event_id: str) -> list[object]:
    sent: list[object] = []

    async def send(event: object) -> None:
        sent.append(event)

    assert await events.replay_events_after(last_event_id, send) is None
    return sent


@pytest.mark.parametrize("owner", ADAPTERS)
async def test_adp1_adp2_mcp_streams_and_the_others_sessions_stay_apart(
    store: SessionStateStore, owner: str
) -> None:
    # The MCP event store writes only the streams it creates (ids it mints, marked `mcp`),
    # so it never writes another's session; another's session is no stream to it.
    await ADAPTERS[owner].write(store)
    before = await _snapshot(store)
    events = HelixEventStore(store)
    assert await _replayed(events, f"{SID}:0") == []
    assert await _snapshot(store) == before
    stream = (await events.store_event("1", None)).rpartition(":")[0]
    info = await store.get_session(stream)
    assert info is not None and info.metadata[ADAPTER_KEY] == "mcp"  # ADP-1
    assert await _snapshot(store) == before
    assert not await ADAPTERS[owner].sees_nothing(store)  # the owner still has its session
