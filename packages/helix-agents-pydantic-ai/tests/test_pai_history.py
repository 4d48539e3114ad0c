"""``HelixHistory`` on the four backends (docs/integrations/pydantic-ai.md, PAI-1..PAI-7)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from pai_parts import all_messages, part_kinds
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
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
from helix_agents.pydantic_ai import (
    MESSAGE_FIELD,
    CorruptMessageError,
    HelixHistory,
    MessageNotStorableError,
)

pytestmark = pytest.mark.anyio


def _sid() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


def _dump(messages: list[ModelMessage]) -> Any:
    return ModelMessagesTypeAdapter.dump_python(messages)


def _turn(prompt: str, answer: str) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(prompt)]),
        ModelResponse(parts=[TextPart(answer)]),
    ]


async def _snapshot(store: SessionStateStore, session_id: str) -> object:
    info = await store.get_session(session_id)
    if info is None:
        return None
    rows = [dump_message(m) for m in await store.get_messages(session_id)]
    return info.metadata, info.message_count, rows


async def test_pai3_every_part_kind_comes_back_exactly(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    sid = _sid()
    messages = all_messages()
    built = {type(p) for m in messages for p in m.parts}
    kinds = {cls for classes in part_kinds().values() for cls in classes}
    # Every kind the release builds is in the catalogue (a deprecated one reads back as
    # its successor, which is).
    assert {k for k in kinds if getattr(k, "__deprecated__", None) is None} <= built
    history = HelixHistory(store, sid)
    assert await history.load() == []
    await history.save(messages)
    loaded = await HelixHistory(other_store, sid).load()
    assert _dump(loaded) == _dump(messages)


async def test_pai2_rows_have_a_role_a_text_and_the_message(store: SessionStateStore) -> None:
    sid = _sid()
    history = HelixHistory(store, sid, user_id="ada")
    await history.load()
    await history.save(_turn("hi there", "hello"))
    info = await store.get_session(sid)
    assert info is not None and info.metadata[ADAPTER_KEY] == "pydantic-ai"  # ADP-1
    assert info.user_id == "ada"
    rows = await store.get_messages(sid)
    assert [(r.role, r.content) for r in rows] == [("user", "hi there"), ("assistant", "hello")]
    assert all(isinstance(r, ChatMessage) and MESSAGE_FIELD in (r.model_extra or {}) for r in rows)


async def test_pai1_one_object_saves_turn_after_turn(store: SessionStateStore) -> None:
    sid = _sid()
    history = HelixHistory(store, sid)
    one, two = _turn("1", "one"), _turn("2", "two")
    await history.load()
    await history.save(one)
    await history.save(two)
    await history.save([])
    assert _dump(history.messages) == _dump(one + two)
    assert _dump(await HelixHistory(store, sid).load()) == _dump(history.messages)


async def test_pai1_a_save_without_a_load_is_refused(store: SessionStateStore) -> None:
    sid = _sid()
    with pytest.raises(ValidationError) as caught:
        await HelixHistory(store, sid).save(_turn("a", "b"))
    assert caught.value.session_id == sid
    assert await store.get_session(sid) is None


@pytest.mark.parametrize("existing", [False, True])
async def test_pai1_of_two_concurrent_runs_exactly_one_saves(
    store: SessionStateStore, other_store: SessionStateStore, existing: bool
) -> None:
    sid = _sid()
    if existing:
        first = HelixHistory(store, sid)
        await first.load()
        await first.save(_turn("start", "ok"))
    a, b = HelixHistory(store, sid), HelixHistory(other_store, sid)
    await asyncio.gather(a.load(), b.load())
    results = await asyncio.gather(
        a.save(_turn("from a", "A")), b.save(_turn("from b", "B")), return_exceptions=True
    )
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(lost) == 1 and isinstance(lost[0], MessageCountConflictError)
    assert (lost[0].code, lost[0].session_id) == ("state_concurrency_conflict", sid)
    winner = a if results[0] is None else b
    stored = await HelixHistory(store, sid).load()
    assert _dump(stored) == _dump(winner.messages)  # nothing of the loser, nothing lost
    assert len(stored) == (4 if existing else 2)


async def test_pai1_a_run_that_loaded_before_another_saved_conflicts(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    sid = _sid()
    slow, fast = HelixHistory(store, sid), HelixHistory(other_store, sid)
    await slow.load()
    await fast.load()
    await fast.save(_turn("fast", "F"))
    before = await _snapshot(store, sid)
    with pytest.raises(MessageCountConflictError) as caught:
        await slow.save(_turn("slow", "S"))
    assert (caught.value.session_id, caught.value.expected, caught.value.actual) == (sid, 0, 2)
    assert await _snapshot(store, sid) == before
    await slow.load()  # load again, run again: now it saves
    await slow.save(_turn("slow", "S"))
    assert len(await HelixHistory(store, sid).load()) == 4


async def test_pai1_a_session_deleted_since_the_load_conflicts_and_is_not_recreated(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    history = HelixHistory(store, sid)
    await history.load()
    await history.save(_turn("a", "b"))
    await store.delete_session(sid)
    with pytest.raises(MessageCountConflictError) as caught:
        await history.save(_turn("c", "d"))
    assert (caught.value.session_id, caught.value.expected, caught.value.actual) == (sid, 2, 0)
    assert await store.get_session(sid) is None


async def test_pai4_a_foreign_session_is_empty_and_refuses_a_save(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    await store.create_session(sid, metadata=mark("openai-agents"))
    history = HelixHistory(store, sid)
    assert await history.load() == []
    before = await _snapshot(store, sid)
    with pytest.raises(ForeignSessionError) as caught:
        await history.save(_turn("a", "b"))
    assert (caught.value.session_id, caught.value.owner) == (sid, "openai-agents")
    assert await _snapshot(store, sid) == before


async def test_pai4_a_shared_session_skips_rows_it_did_not_write(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    await store.create_session(sid)
    note = ChatMessage(role="user", content="written by the application")
    await store.append_messages(sid, MessageCommit(messages=(note,)))
    history, turn = HelixHistory(store, sid), _turn("a", "b")
    assert await history.load() == []
    await history.save(turn)
    assert _dump(await HelixHistory(store, sid).load()) == _dump(turn)
    assert len(await store.get_messages(sid)) == 3


@pytest.mark.parametrize("stored", ["{not json", '[{"kind": "nothing"}]', "[]", 42])
async def test_pai5_a_corrupt_row_is_a_typed_error(store: SessionStateStore, stored: Any) -> None:
    sid = _sid()
    history = HelixHistory(store, sid)
    await history.load()
    await history.save(_turn("a", "b"))
    row = ChatMessage(role="assistant", content=None, id="r-9", **{MESSAGE_FIELD: stored})
    await store.append_messages(sid, MessageCommit(messages=(row,)))
    with pytest.raises(CorruptMessageError) as caught:
        await HelixHistory(store, sid).load()
    assert caught.value.code == "validation_error"
    assert (caught.value.session_id, caught.value.row_id) == (sid, "r-9")


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    "args",
    [
        {"x": float("nan")},
        {"x": (1, 2)},
        {"x": {1, 2}},
        {"x": b"bytes"},
        {1: "int key"},
        {"x": "\ud800"},
        _nested(10_000),
    ],
    ids=["nan", "tuple", "set", "bytes", "int-key", "lone-surrogate", "nested-10000"],
)
async def test_pai6_a_message_that_would_change_is_refused_before_any_write(
    store: SessionStateStore, args: Any
) -> None:
    sid = _sid()
    history = HelixHistory(store, sid)
    await history.load()
    await history.save(_turn("a", "b"))
    before = await _snapshot(store, sid)
    bad = ModelResponse(parts=[ToolCallPart("tool", args)])
    with pytest.raises(MessageNotStorableError) as caught:
        await history.save([ModelRequest(parts=[UserPromptPart("ok")]), bad])
    assert caught.value.code == "validation_error"
    assert (caught.value.session_id, caught.value.index) == (sid, 1)
    assert await _snapshot(store, sid) == before
    # A refused first save leaves no session behind either.
    fresh = HelixHistory(store, _sid())
    await fresh.load()
    with pytest.raises(MessageNotStorableError):
        await fresh.save([bad])
    assert await store.get_session(fresh.session_id) is None


async def test_pai6_huge_text_and_deep_arguments_within_limits_come_back(
    store: SessionStateStore,
) -> None:
    sid = _sid()
    huge = "é\u2028" * 500_000 + "\U0001f600"
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(huge)]),
        ModelResponse(parts=[ToolCallPart("deep", _nested(150)), TextPart(huge)]),
    ]
    history = HelixHistory(store, sid)
    await history.load()
    await history.save(messages)
    assert _dump(await HelixHistory(store, sid).load()) == _dump(messages)


@pytest.mark.parametrize(
    ("session_id", "user_id"),
    [("", None), ("a\x00b", None), ("x" * 513, None), ("ok", ""), ("ok", "u\x00")],
    ids=["empty", "nul", "too-long", "empty-user", "nul-user"],
)
def test_pai6_odd_ids_are_refused_at_construction(session_id: str, user_id: str | None) -> None:
    with pytest.raises(ValidationError) as caught:
        HelixHistory(None, session_id, user_id=user_id)  # type: ignore[arg-type]
    assert caught.value.code == "validation_error"


@pytest.mark.parametrize(
    "session_id", ["é \U0001f600 \u2028", "a/b\\c?d#e", "x" * 512, " ", "../..", "SELECT *"]
)
async def test_pai6_unusual_but_valid_ids_work(store: SessionStateStore, session_id: str) -> None:
    history, turn = HelixHistory(store, session_id), _turn("a", "b")
    await history.load()
    await history.save(turn)
    assert _dump(await HelixHistory(store, session_id).load()) == _dump(turn)
    await store.delete_session(session_id)
