"""Agent Framework's history-provider contract, restated, on its own provider and on ours.

No tests ship with ``agent-framework-core``; these restate what its docs and source say
a ``HistoryProvider`` does (docs/integrations/agent-framework.md, MAF-1..MAF-6) and run on
the framework's ``InMemoryHistoryProvider`` and on ``HelixHistoryProvider`` on memory,
SQLite, PostgreSQL and Redis. A rule that holds from some release on is skipped, with its
reason, on an older framework's own provider only.
"""

from __future__ import annotations

import importlib.metadata
import json
import uuid
from typing import Any

import pytest
from agent_framework import Agent, AgentSession, Content, Message
from maf_client import ScriptedClient, seen_texts
from maf_contents import all_messages, content_kinds
from maf_fixtures import Subject

pytestmark = pytest.mark.anyio

FRAMEWORK = tuple(int(p) for p in importlib.metadata.version("agent-framework-core").split(".")[:2])


def _sid() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


def dumped(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as the framework serializes them: what "equal" means here."""
    return [m.to_dict() for m in messages]


def _said(*texts: str) -> list[Message]:
    return [Message("user" if i % 2 == 0 else "assistant", [t]) for i, t in enumerate(texts)]


async def test_maf1_a_new_session_is_empty_and_sessions_are_apart(subject: Subject) -> None:
    one, two = _sid(), _sid()
    assert await subject.get(one) == []
    await subject.save(one, _said("a", "b"))
    assert dumped(await subject.get(one)) == dumped(_said("a", "b"))
    assert await subject.get(two) == []
    # A returned list is the caller's: changing it changes nothing stored.
    (await subject.get(one)).clear()
    assert len(await subject.get(one)) == 2


async def test_maf2_every_content_kind_comes_back_exactly(subject: Subject) -> None:
    sid, messages = _sid(), all_messages()
    kinds = {c.type for m in messages for c in m.contents}
    assert content_kinds() <= kinds
    await subject.save(sid, messages)
    assert dumped(await subject.get(sid)) == dumped(messages)
    again = subject.restarted()  # through the framework's session serialization, or the store
    assert dumped(await again.get(sid)) == dumped(messages)


async def test_maf3_saves_append_in_order_and_an_empty_save_writes_nothing(
    subject: Subject,
) -> None:
    sid = _sid()
    await subject.save(sid, _said("1", "one"))
    await subject.save(sid, [])
    await subject.save(sid, _said("2", "two"))
    await subject.save(sid, [Message("user", ["3"])])
    assert [m.text for m in await subject.get(sid)] == ["1", "one", "2", "two", "3"]


async def test_maf4_an_agent_loads_the_history_before_a_run_and_saves_the_run_after(
    subject: Subject,
) -> None:
    client, session = ScriptedClient(), AgentSession(session_id=_sid())
    agent = Agent(client, context_providers=[subject.provider])
    first = await agent.run("hello", session=session)
    second = await agent.run("again", session=session)
    assert (first.text, second.text) == ("reply 1 to hello", "reply 2 to again")
    assert seen_texts(client.requests[1]) == [
        ("user", "hello"),
        ("assistant", "reply 1 to hello"),
        ("user", "again"),
    ]
    state = session.state.get(subject.provider.source_id)
    stored = await subject.provider.get_messages(session.session_id, state=state)
    assert seen_texts(stored) == [
        *seen_texts(client.requests[1]),
        ("assistant", "reply 2 to again"),
    ]


async def test_maf4_a_function_call_and_its_result_are_saved_with_the_run(
    subject: Subject,
) -> None:
    def lookup(x: int) -> str:
        """A tool."""
        return f"found {x}"

    client, session = ScriptedClient(), AgentSession(session_id=_sid())
    agent = Agent(client, tools=[lookup], context_providers=[subject.provider])
    assert (await agent.run("call lookup", session=session)).text == "tool said found 1"
    state = session.state.get(subject.provider.source_id)
    stored = await subject.provider.get_messages(session.session_id, state=state)
    assert [(m.role, [c.type for c in m.contents]) for m in stored] == [
        ("user", ["text"]),
        ("assistant", ["function_call"]),
        ("tool", ["function_result"]),
        ("assistant", ["text"]),
    ]


@pytest.mark.parametrize(
    ("flags", "kept"),
    [
        # The agent then adds its own in-memory provider to load (the framework's rule).
        ({"load_messages": False}, ["hello", "reply 1 to hello", "again", "reply 2 to again"]),
        ({"store_inputs": False}, ["reply 1 to hello", "reply 2 to again"]),
        ({"store_outputs": False}, ["hello", "again"]),
    ],
    ids=["no-load", "no-inputs", "no-outputs"],
)
async def test_maf4_the_flags_decide_what_is_stored(
    subject: Subject, flags: dict[str, bool], kept: list[str]
) -> None:
    provider = subject.make(**flags)
    session = AgentSession(session_id=_sid())
    agent = Agent(ScriptedClient(), context_providers=[provider])
    await agent.run("hello", session=session)
    await agent.run("again", session=session)
    state = session.state.get(provider.source_id)
    stored = await subject.make().get_messages(session.session_id, state=state)
    assert [m.text for m in stored] == kept


async def test_maf5_a_serialized_session_continues_after_a_restart(subject: Subject) -> None:
    session = AgentSession(session_id=_sid())
    agent = Agent(ScriptedClient(), context_providers=[subject.provider])
    await agent.run("hello", session=session)
    text = json.dumps(session.to_dict())

    again = subject.restarted()
    client = ScriptedClient()
    restored = AgentSession.from_dict(json.loads(text))
    answer = await Agent(client, context_providers=[again.provider]).run("more", session=restored)
    assert answer.text == "reply 1 to more"
    assert seen_texts(client.requests[0]) == [
        ("user", "hello"),
        ("assistant", "reply 1 to hello"),
        ("user", "more"),
    ]


async def test_maf6_a_replayed_transcript_is_stored_once(subject: Subject) -> None:
    if subject.is_reference and FRAMEWORK < (1, 15):
        pytest.skip("the framework's own providers drop a replayed transcript from 1.15 on")
    sid = _sid()
    a, b, c, d = (
        Message("user", ["a"]),
        Message("assistant", ["b"]),
        Message("user", ["c"], message_id="m-c"),
        Message("assistant", [Content.from_text("d")]),
    )
    await subject.save(sid, [a, b])
    await subject.save(sid, [a, b, c])  # the whole transcript again, with one new message
    await subject.save(sid, [c, d])  # overlapping the end
    assert [m.text for m in await subject.get(sid)] == ["a", "b", "c", "d"]
    # A longer history: only its end can overlap a short save.
    await subject.save(sid, _said("e", "f", "g", "h"))
    await subject.save(sid, [*_said("g", "h"), Message("user", ["i"])])
    await subject.save(sid, [Message("assistant", ["j"])])
    texts = [m.text for m in await subject.get(sid)]
    assert texts == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    # A repeated input without an id is a new turn, not a replay.
    solo = _sid()
    await subject.save(solo, [Message("user", ["same"])])
    await subject.save(solo, [Message("user", ["same"])])
    assert [m.text for m in await subject.get(solo)] == ["same", "same"]
