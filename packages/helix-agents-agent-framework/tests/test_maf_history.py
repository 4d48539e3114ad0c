"""``HelixHistoryProvider``'s own promises on the four backends (MAF-7..MAF-10).

The framework's in-memory provider has no conflict check, no rows and no limits, so these
run on ours only (docs/integrations/agent-framework.md).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from typing import Any

import pytest
from agent_framework import Agent, AgentSession, Content, Message
from helix_backends import BACKENDS
from maf_client import GatedClient, ScriptedClient

from helix_agents.agent_framework import (
    COUNT_KEY,
    MESSAGE_FIELD,
    CorruptMessageError,
    HelixHistoryProvider,
    MessageNotStorableError,
)
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    MessageCountConflictError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.core.errors import ForeignSessionError
from helix_agents.core.messages import dump_message

# Our provider on each backend; the framework's own is left out.
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]


def _sid() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


def _turn(prompt: str, answer: str) -> list[Message]:
    return [Message("user", [prompt]), Message("assistant", [answer])]


def _dumped(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


async def _snapshot(store: SessionStateStore, session_id: str) -> object:
    info = await store.get_session(session_id)
    if info is None:
        return None
    rows = [dump_message(m) for m in await store.get_messages(session_id)]
    return info.metadata, info.message_count, rows


async def _race(*runs: Awaitable[object]) -> list[object]:
    return await asyncio.gather(*runs, return_exceptions=True)


async def test_maf7_of_two_concurrent_agent_runs_exactly_one_saves(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    sid, gate = _sid(), asyncio.Barrier(2)
    first = HelixHistoryProvider(store)
    await Agent(ScriptedClient(), context_providers=[first]).run(
        "start", session=AgentSession(session_id=sid)
    )
    a = Agent(GatedClient(gate), context_providers=[HelixHistoryProvider(store)])
    b = Agent(GatedClient(gate), context_providers=[HelixHistoryProvider(other_store)])
    results = await _race(
        a.run("from a", session=AgentSession(session_id=sid)),
        b.run("from b", session=AgentSession(session_id=sid)),
    )
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(lost) == 1 and isinstance(lost[0], MessageCountConflictError), results
    assert (lost[0].code, lost[0].session_id, lost[0].expected, lost[0].actual) == (
        "state_concurrency_conflict",
        sid,
        2,
        4,
    )
    winner = "from a" if isinstance(results[1], BaseException) else "from b"
    stored = [m.text for m in await HelixHistoryProvider(other_store).get_messages(sid)]
    assert stored == ["start", "reply 1 to start", winner, f"reply 1 to {winner}"]


async def test_maf7_two_runs_on_one_session_object_do_not_share_a_count(
    store: SessionStateStore,
) -> None:
    sid, gate = _sid(), asyncio.Barrier(2)
    provider, session = HelixHistoryProvider(store), AgentSession(session_id=sid)
    agent = Agent(GatedClient(gate), context_providers=[provider])
    results = await _race(agent.run("x", session=session), agent.run("y", session=session))
    assert sum(isinstance(r, MessageCountConflictError) for r in results) == 1, results
    assert len(await provider.get_messages(sid)) == 2


async def test_maf7_a_save_after_another_writer_conflicts_and_writes_nothing(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    sid = _sid()
    slow, fast = HelixHistoryProvider(store), HelixHistoryProvider(other_store)
    slow_state: dict[str, Any] = {}
    fast_state: dict[str, Any] = {}
    await slow.get_messages(sid, state=slow_state)
    await fast.get_messages(sid, state=fast_state)
    await fast.save_messages(sid, _turn("fast", "F"), state=fast_state)
    before = await _snapshot(store, sid)
    with pytest.raises(MessageCountConflictError) as caught:
        await slow.save_messages(sid, _turn("slow", "S"), state=slow_state)
    assert (caught.value.session_id, caught.value.expected, caught.value.actual) == (sid, 0, 2)
    assert await _snapshot(store, sid) == before
    await slow.get_messages(sid, state=slow_state)  # load again: now it saves
    await slow.save_messages(sid, _turn("slow", "S"), state=slow_state)
    assert slow_state[COUNT_KEY] == 4
    # Without a state there is no load to hold to: the save appends.
    await fast.save_messages(sid, _turn("late", "L"))
    assert len(await fast.get_messages(sid)) == 6


async def test_maf7_a_session_deleted_since_the_load_conflicts_and_is_not_recreated(
    store: SessionStateStore,
) -> None:
    sid, state = _sid(), dict[str, Any]()
    provider = HelixHistoryProvider(store)
    await provider.get_messages(sid, state=state)
    await provider.save_messages(sid, _turn("a", "b"), state=state)
    await store.delete_session(sid)
    with pytest.raises(MessageCountConflictError) as caught:
        await provider.save_messages(sid, _turn("c", "d"), state=state)
    assert (caught.value.session_id, caught.value.expected, caught.value.actual) == (sid, 2, 0)
    assert await store.get_session(sid) is None


async def test_maf8_rows_have_a_role_a_text_the_message_and_the_mark(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    provider = HelixHistoryProvider(store, user_id="ada")
    await provider.save_messages(
        sid,
        [
            Message("system", ["be brief"]),
            Message("user", ["hi there"]),
            Message("assistant", [Content.from_function_call("c1", "f", arguments="{}")]),
            Message("critic", ["a custom role"]),
        ],
    )
    info = await store.get_session(sid)
    assert info is not None and info.metadata[ADAPTER_KEY] == "agent-framework"  # ADP-1
    assert info.user_id == "ada"
    rows = await store.get_messages(sid)
    assert [(r.role, r.content) for r in rows] == [
        ("system", "be brief"),
        ("user", "hi there"),
        ("assistant", None),
        ("assistant", "a custom role"),
    ]
    assert all(isinstance(r, ChatMessage) and MESSAGE_FIELD in (r.model_extra or {}) for r in rows)
    assert [m.role for m in await provider.get_messages(sid)] == [
        "system",
        "user",
        "assistant",
        "critic",
    ]


async def test_maf8_a_foreign_session_is_empty_and_refuses_a_save(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    await store.create_session(sid, metadata=mark("pydantic-ai"))
    provider = HelixHistoryProvider(store)
    assert await provider.get_messages(sid) == []
    before = await _snapshot(store, sid)
    with pytest.raises(ForeignSessionError) as caught:
        await provider.save_messages(sid, _turn("a", "b"))
    assert (caught.value.session_id, caught.value.owner) == (sid, "pydantic-ai")
    assert await _snapshot(store, sid) == before


async def test_maf8_a_shared_session_skips_rows_it_did_not_write(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    await store.create_session(sid)
    note = ChatMessage(role="user", content="written by the application")
    await store.append_messages(sid, MessageCommit(messages=(note,)))
    provider, state = HelixHistoryProvider(store), dict[str, Any]()
    assert await provider.get_messages(sid, state=state) == []
    await provider.save_messages(sid, _turn("a", "b"), state=state)
    assert [m.text for m in await provider.get_messages(sid)] == ["a", "b"]
    assert len(await store.get_messages(sid)) == 3
    # The application writes again; a replay of our last turn is still recognized (MAF-6).
    await store.append_messages(sid, MessageCommit(messages=(note,)))
    await provider.save_messages(sid, [*_turn("a", "b"), Message("user", ["c"])])
    assert [m.text for m in await provider.get_messages(sid)] == ["a", "b", "c"]


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


class _Opaque:
    pass


# Each value refused at the boundary (the check runs before any read or write, the same on
# every backend; one test per backend walks them all, naming the case on a failure).
REFUSED: dict[str, Any] = {
    "nan": Message(
        "assistant", [Content.from_function_call("c", "f", arguments={"x": float("nan")})]
    ),
    "tuple": Message("assistant", [Content.from_function_call("c", "f", arguments={"x": (1, 2)})]),
    "set": Message("assistant", [Content.from_function_call("c", "f", arguments={"x": {1, 2}})]),
    "object": Message("user", ["ok"], additional_properties={"o": _Opaque()}),
    "bytes": Message("user", ["ok"], additional_properties={"b": b"bytes"}),
    "int-key": Message("user", ["ok"], additional_properties={"k": {1: "int key"}}),
    "lone-surrogate": Message("user", ["lone \ud800 surrogate"]),
    "nested-10000": Message("user", ["deep"], additional_properties={"deep": _nested(10_000)}),
    "not-a-message": {"role": "user", "contents": ["a dict, not a Message"]},
}


async def test_maf9_a_message_that_would_change_is_refused_before_any_write(
    store: SessionStateStore,
) -> None:
    sid, state = _sid(), dict[str, Any]()
    provider = HelixHistoryProvider(store)
    await provider.get_messages(sid, state=state)
    await provider.save_messages(sid, _turn("a", "b"), state=state)
    before = await _snapshot(store, sid)
    for case, bad in REFUSED.items():
        with pytest.raises(MessageNotStorableError) as caught:
            await provider.save_messages(sid, [Message("user", ["fine"]), bad], state=state)
        err = caught.value
        assert isinstance(err, ValueError), case  # what the framework's own providers raise
        assert (err.code, err.session_id, err.index) == ("validation_error", sid, 1), case
        assert sid in str(err), case
        assert await _snapshot(store, sid) == before, case
        # A refused first save leaves no session behind either.
        fresh = _sid()
        with pytest.raises(MessageNotStorableError):
            await provider.save_messages(fresh, [bad])
        assert await store.get_session(fresh) is None, case


async def test_maf9_huge_text_and_deep_results_within_limits_come_back(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    huge = "é\u2028" * 500_000 + "\U0001f600"
    messages = [
        Message("user", [huge]),
        Message("tool", [Content.from_function_result("c", result=_nested(150))]),
        Message("assistant", [huge], additional_properties={"deep": _nested(150)}),
    ]
    await HelixHistoryProvider(store).save_messages(sid, messages)
    assert _dumped(await HelixHistoryProvider(store).get_messages(sid)) == _dumped(messages)


async def test_maf9_odd_ids_are_refused(store: SessionStateStore) -> None:
    provider = HelixHistoryProvider(store)
    for session_id in (None, "", "a\x00b", "x" * 513, 42, "\ud800"):
        for call in (
            provider.get_messages(session_id),  # type: ignore[arg-type]
            provider.save_messages(session_id, _turn("a", "b")),  # type: ignore[arg-type]
        ):
            with pytest.raises(ValidationError) as caught:
                await call
            assert caught.value.code == "validation_error", session_id
            assert "session_id" in str(caught.value), session_id
    for user_id in ("", "u\x00", "x" * 513):
        with pytest.raises(ValidationError):
            HelixHistoryProvider(store, user_id=user_id)
    with pytest.raises(ValidationError):  # a count in state that is not a count
        await provider.save_messages(_sid(), _turn("a", "b"), state={COUNT_KEY: "7"})


async def test_maf9_unusual_but_valid_ids_work(store: SessionStateStore) -> None:
    provider, turn = HelixHistoryProvider(store), _turn("a", "b")
    for session_id in ("é \U0001f600 \u2028", "a/b\\c?d#e", "x" * 512, " ", "../..", "SELECT *"):
        await provider.save_messages(session_id, turn)
        assert _dumped(await provider.get_messages(session_id)) == _dumped(turn), session_id
        await store.delete_session(session_id)


async def test_maf10_a_corrupt_row_is_a_typed_error(store: SessionStateStore) -> None:
    corrupt = ["{not json", "[]", '{"role": "user", "contents": [{"no": "type"}]}', 42]
    for index, stored in enumerate(corrupt):
        sid = _sid()
        provider = HelixHistoryProvider(store)
        await provider.save_messages(sid, _turn("a", "b"))
        row = ChatMessage(
            role="assistant", content=None, id=f"r-{index}", **{MESSAGE_FIELD: stored}
        )
        await store.append_messages(sid, MessageCommit(messages=(row,)))
        with pytest.raises(CorruptMessageError) as caught:
            await provider.get_messages(sid)
        assert caught.value.code == "validation_error", stored
        assert (caught.value.session_id, caught.value.row_id) == (sid, f"r-{index}"), stored
