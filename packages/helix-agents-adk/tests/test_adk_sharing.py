"""ADP-1..ADP-3 and ADP-6 (docs/integrations/sharing.md) on our service, on every backend.

Sessions, rows and maps that other code wrote are made straight through the store
(adk_around.py); what the service leaves in the store is read the same way.
"""

from __future__ import annotations

import pytest
from adk_around import APP, name, sid_of, snapshot
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig
from helix_backends import BACKENDS
from test_adk_contract import said, texts

from helix_agents.adk import EVENT_FIELD, CorruptEventError, HelixSessionService
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    ScopedStateDelta,
    SessionStateStore,
)
from helix_agents.core.adapters import ADAPTER_KEY, AdapterName, mark
from helix_agents.core.errors import ForeignSessionError

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]


async def made_through_store(
    store: SessionStateStore, sid: str, user: str = "ada", *, adapter: AdapterName | None = None
) -> None:
    """A session of ``APP``'s ``user`` another runtime made: one plain row, one own key."""
    metadata = None if adapter is None else mark(adapter, {"by": "them"})
    await store.create_session(sid, user_id=name(APP, user), metadata=metadata)
    await store.append_messages(
        sid,
        MessageCommit(
            messages=(ChatMessage(role="user", content="theirs"),),
            scoped_state=(ScopedStateDelta(scope="session", changes={"theirs": 1}),),
        ),
    )


async def test_adp1_created_sessions_carry_the_adk_mark(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    info = await store.get_session(sid_of("ada", "s1"))
    assert info is not None
    assert info.metadata == {
        "app_name": APP,
        "user_id": "ada",
        "session_id": "s1",
        ADAPTER_KEY: "adk",
    }


async def test_adp2_another_adapters_session_is_missing_to_reads(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="mine")
    await made_through_store(store, sid_of("ada", "theirs"), adapter="langgraph")
    assert await service.get_session(app_name=APP, user_id="ada", session_id="theirs") is None
    for listing in (
        await service.list_sessions(app_name=APP, user_id="ada"),
        await service.list_sessions(app_name=APP),
    ):
        assert [s.id for s in listing.sessions] == ["mine"]


async def test_adp2_writes_to_another_adapters_session_raise_and_write_nothing(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    sid = sid_of("ada", "theirs")
    await made_through_store(store, sid, adapter="openai-agents")
    before = await snapshot(store, sid)
    by_hand = Session(id="theirs", app_name=APP, user_id="ada")
    writes = [
        service.append_event(by_hand, said("agent", "x", k=1, **{"user:u": 1, "app:a": 1})),
        service.delete_session(app_name=APP, user_id="ada", session_id="theirs"),
        service.create_session(app_name=APP, user_id="ada", session_id="theirs", state={"k": 2}),
    ]
    for write in writes:
        with pytest.raises(ForeignSessionError) as refused:
            await write
        err = refused.value
        assert (err.code, err.owner, err.adapter) == (
            "state_foreign_session",
            "openai-agents",
            "adk",
        )
        assert err.session_id == sid
        assert await snapshot(store, sid) == before
    assert by_hand.events == [] and by_hand.state == {}


async def test_adp2_unmarked_sessions_are_shared(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    sid = sid_of("ada", "shared")
    await made_through_store(store, sid)
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="ada", session_id="shared")
    session = await service.get_session(app_name=APP, user_id="ada", session_id="shared")
    assert session is not None and session.events == [] and session.state == {"theirs": 1}
    await service.append_event(session, said("agent", "ours", k=1))
    again = await service.get_session(app_name=APP, user_id="ada", session_id="shared")
    assert again is not None and texts(again) == ["ours"]
    assert again.state == {"theirs": 1, "k": 1}
    listed = (await service.list_sessions(app_name=APP, user_id="ada")).sessions
    assert [(s.id, s.state) for s in listed] == [("shared", {"theirs": 1, "k": 1})]
    await service.delete_session(app_name=APP, user_id="ada", session_id="shared")
    assert await store.get_session(sid) is None


async def test_adp2_listings_skip_what_is_not_an_adk_session(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    await service.create_session(app_name=APP, user_id="ada", session_id="mine")
    # The user's listing holds sessions made through the store under the same owner.
    odd_ids = [
        "plain-id",
        name(APP, "ada"),
        name(APP, "bob", "x"),
        f'["{APP}", "ada", "spaced"]',
        f'["{APP}","ada",1]',
        f'["{APP}","ada","a","b"]',
        "[" * 300,
    ]
    for odd in odd_ids:
        await made_through_store(store, odd)
    # The app's map of users holds keys the service never wrote.
    await store.append_messages(
        odd_ids[0],
        MessageCommit(
            scoped_state=(
                ScopedStateDelta(
                    scope="app",
                    owner=name(APP, None),
                    changes={
                        "not json": True,
                        "42": True,
                        '["x"]': True,
                        '"nobody"': True,
                        '"\\u0041"': True,  # "A", spelled otherwise than the service would
                        '"' + "u" * 505 + '"': True,  # a user whose owner would be too long
                    },
                ),
            )
        ),
    )
    for listing in (
        await service.list_sessions(app_name=APP, user_id="ada"),
        await service.list_sessions(app_name=APP),
    ):
        assert [(s.user_id, s.id) for s in listing.sessions] == [("ada", "mine")]


async def test_adp3_rows_another_runtime_wrote_are_skipped_by_every_read(
    service: HelixSessionService, store: SessionStateStore
) -> None:
    sid = sid_of("ada", "s1")
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, said("user", "one", at=1.0))
    foreign = (
        ChatMessage(role="user", content="plain"),
        ChatMessage(role="assistant", content="sdk", openai_item='{"type": "message"}'),
        ChatMessage(role="tool", content=None, other={"adk": "no"}),
    )
    await store.append_messages(sid, MessageCommit(messages=foreign))
    read_back = await service.get_session(app_name=APP, user_id="ada", session_id="s1")
    assert read_back is not None and texts(read_back) == ["one"]
    await service.append_event(read_back, said("agent", "two", at=2.0))
    await store.append_messages(sid, MessageCommit(messages=foreign))

    async def read(**config: object) -> list[str]:
        return texts(
            await service.get_session(
                app_name=APP,
                user_id="ada",
                session_id="s1",
                config=GetSessionConfig.model_validate(config),
            )
        )

    assert await read() == ["one", "two"]
    assert await read(num_recent_events=1) == []  # the newest row is not an event
    assert await read(num_recent_events=4) == ["two"]
    assert await read(after_timestamp=0.5) == ["one", "two"]
    assert await read(after_timestamp=1.5) == ["two"]
    assert await read(num_recent_events=1, after_timestamp=0.5) == ["two"]


@pytest.mark.parametrize(
    "stored",
    ["{not json", '{"author": 7}', "[]", "", '{"author": "x", "timestamp": "soon"}', 42, None],
)
async def test_adp6_a_corrupt_event_row_names_its_session_and_row(
    service: HelixSessionService, store: SessionStateStore, stored: object
) -> None:
    sid = sid_of("ada", "s1")
    session = await service.create_session(app_name=APP, user_id="ada", session_id="s1")
    await service.append_event(session, said("user", "fine", at=1.0))
    bad = ChatMessage(role="assistant", content="edited", **{EVENT_FIELD: stored})
    await store.append_messages(sid, MessageCommit(messages=(bad,)))
    for config in (None, {"num_recent_events": 1}, {"after_timestamp": 0.5}):
        with pytest.raises(CorruptEventError) as caught:
            await service.get_session(
                app_name=APP,
                user_id="ada",
                session_id="s1",
                config=None if config is None else GetSessionConfig.model_validate(config),
            )
        err = caught.value
        assert (err.code, err.session_id, err.row) == ("adk_corrupt_event", sid, 1)
        assert isinstance(err, ValueError) and not err.retryable
    # The listing reads no events, so it still shows the session.
    listed = (await service.list_sessions(app_name=APP, user_id="ada")).sessions
    assert [s.id for s in listed] == ["s1"]
