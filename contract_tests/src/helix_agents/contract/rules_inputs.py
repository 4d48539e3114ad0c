"""INP-1..INP-3: what a store accepts it gives back exactly; what it refuses, it refuses first."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.control import note as hypothesis_note

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextMessage,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    SessionStateStore,
    StartRun,
    StoredContextItem,
    ValidationError,
)

from ._base import StoreFactory, rule
from ._helpers import at, snapshot
from ._hostile import (
    ID_EDGE,
    MAX_DEPTH,
    ODD_TEXT,
    hostile_ids,
    hostile_json,
    id_ok,
    json_ok,
    nested,
    same_json,
)
from .machine import PROFILE_ENV

_T = TypeVar("_T")


def _run_property(
    factory: StoreFactory,
    strategy: st.SearchStrategy[_T],
    check: Callable[[SessionStateStore, _T], Coroutine[Any, Any, None]],
) -> None:
    """Run ``check`` on examples of ``strategy`` against one store on a private event loop."""
    base = settings.get_profile(os.environ.get(PROFILE_ENV, "helix-ci"))
    profile = settings(
        base,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    with asyncio.Runner() as runner:
        store = factory()
        runner.run(store.__aenter__())
        try:

            @profile
            @given(strategy)
            def prop(value: _T) -> None:
                runner.run(check(store, value))

            prop()
        finally:
            runner.run(store.__aexit__(None, None, None))


def note(text: str) -> None:
    """Tell Hypothesis about the example, when one is running (INP-3 runs without)."""
    if currently_in_test_context():
        hypothesis_note(text)


def _dump(value: Any) -> Any:
    return value.model_dump(by_alias=True, exclude_unset=True)


def _same_models(expected: list[Any], actual: list[Any]) -> bool:
    return same_json([_dump(e) for e in expected], [_dump(a) for a in actual])


async def _refused_or_done(
    store: SessionStateStore, sid: str, ok: bool, write: Callable[[], Awaitable[object]]
) -> bool:
    """Run ``write``: it must land when ``ok``, else be a ValidationError that wrote nothing."""
    if ok:
        await write()
        return True
    before = await snapshot(store, sid)
    with pytest.raises(ValidationError) as refused:
        await write()
    note(f"refused: {refused.value}")
    assert refused.value.code == "validation_error"
    assert not refused.value.retryable
    assert await snapshot(store, sid) == before
    return False


def _build(ok: bool, make: Callable[[], _T]) -> _T | None:
    """``make()``; a value refused already when built is fine when it is outside the limits."""
    try:
        return make()
    except ValidationError:
        assert not ok, "a value within the limits could not be built"
        return None


async def _json_everywhere(store: SessionStateStore, value: Any) -> None:
    """INP-1's property: ``value`` in every carrier lands and reads back, or is refused."""
    # Each field is held to the limits on its own: wrapping a value nests it one level deeper.
    ok, wrapped_ok = json_ok(value), json_ok({"v": value})
    parts_ok = json_ok([{"type": "data", "data": value}])
    note(f"within limits: {ok}, wrapped: {wrapped_ok}, as parts: {parts_ok}")
    sid = (await store.create_session(f"inp-{uuid.uuid4().hex}")).id
    text = value if isinstance(value, str) else "text"
    rows: list[Any] = []
    for row_ok, make in (
        (ok, lambda: ChatMessage(role="assistant", content=None, tool_calls=value)),
        (
            parts_ok,
            lambda: ChatMessage(role="user", content=[{"type": "data", "data": value}], id=text),
        ),
        (
            wrapped_ok,
            lambda: ContextMessage(
                kind="notice", content=text, metadata={"v": value}, provider_options={"v": value}
            ),
        ),
    ):
        row = _build(row_ok, make)
        if row is not None and await _refused_or_done(
            store,
            sid,
            row_ok,
            partial(store.append_messages, sid, MessageCommit(messages=(row,))),
        ):
            rows.append(row)
    records: dict[str, list[Any]] = {"items": [], "late": [], "approvals": [], "checkpoints": []}
    writes: list[tuple[str, bool, Callable[[], Any], Callable[[Any], Awaitable[object]]]] = [
        (
            "items",
            wrapped_ok,
            lambda: StoredContextItem(
                key="k",
                item=ContextItem(
                    kind="memory", content=text, memory_ids=[text], metadata={"v": value}
                ),
                at=at(0),
            ),
            lambda r: store.record_context_item(sid, r),
        ),
        (
            "late",
            ok,
            lambda: LateAnswer(call_id="c", tool_name=text, output=value, at=at(0)),
            lambda r: store.record_late_answer(sid, r),
        ),
        (
            "approvals",
            ok,
            lambda: PendingApproval(
                approval_id="a", tool_name=text, tool_call_id=text, input=value, requested_at=at(0)
            ),
            lambda r: store.add_pending_approvals(sid, [r]),
        ),
        (
            "checkpoints",
            ok,
            lambda: Checkpoint(
                checkpoint_id="p",
                run_id="r",
                message_count=len(rows),
                state=value,
                created_at=at(0),
            ),
            lambda r: store.save_checkpoint(sid, r),
        ),
    ]
    for name, record_ok, make_record, write in writes:
        record = _build(record_ok, make_record)
        if record is not None and await _refused_or_done(
            store, sid, record_ok, partial(write, record)
        ):
            records[name].append(record)
    meta_sid = f"inp-{uuid.uuid4().hex}"
    try:
        await store.create_session(meta_sid, metadata={"v": value})
    except ValidationError:
        assert not wrapped_ok, "session metadata within the limits was refused"
        assert await store.get_session(meta_sid) is None
    else:
        assert wrapped_ok, "session metadata outside the limits was accepted"
        info = await store.get_session(meta_sid)
        assert info is not None and same_json(info.metadata, {"v": value})
        clone = await store.clone_session(meta_sid)
        assert same_json(clone.metadata, {"v": value})
        fetched = await store.get_session(clone.id)
        assert fetched is not None and same_json(fetched.metadata, {"v": value})
    await _reads_match(store, sid, rows, records)
    clone = await store.clone_session(sid)
    assert _same_models(rows, await store.get_messages(clone.id))
    assert _same_models(records["checkpoints"], await store.list_checkpoints(clone.id))


async def _reads_match(
    store: SessionStateStore, sid: str, rows: list[Any], records: dict[str, list[Any]]
) -> None:
    assert _same_models(rows, await store.get_messages(sid))
    assert _same_models(rows[-1:], await store.get_messages(sid, limit=1))
    assert _same_models(rows, list((await store.page_messages(sid, limit=500)).messages))
    desc = await store.page_messages(sid, limit=500, order="desc")
    assert _same_models(rows[::-1], list(desc.messages))
    assert _same_models(records["items"], await store.list_undelivered_context_items(sid))
    assert _same_models(records["late"], await store.list_undelivered_late_answers(sid))
    assert _same_models(records["approvals"], await store.list_pending_approvals(sid))
    checkpoints = records["checkpoints"]
    assert _same_models(checkpoints, await store.list_checkpoints(sid))
    latest = await store.latest_checkpoint(sid)
    assert _same_models(checkpoints, [] if latest is None else [latest])
    found = await store.get_checkpoint(sid, "p")
    assert _same_models(checkpoints, [] if found is None else [found])
    assert _same_models(checkpoints, await store.page_checkpoints(sid))


async def _id_everywhere(store: SessionStateStore, value: str) -> None:
    """INP-2's property: ``value`` as every kind of id is stored and found, or refused."""
    ok = id_ok(value)
    note(f"within limits: {ok}")
    sid = (await store.create_session(f"inp-{uuid.uuid4().hex}")).id

    async def landed(write: Callable[[], Awaitable[object]]) -> bool:
        return await _refused_or_done(store, sid, ok, write)

    if await landed(lambda: store.record_context_item(sid, _item(value))):
        assert [r.key for r in await store.list_undelivered_context_items(sid)] == [value]
    if await landed(lambda: store.record_late_answer(sid, _late(value))):
        assert [r.call_id for r in await store.list_undelivered_late_answers(sid)] == [value]
    if await landed(lambda: store.add_pending_approvals(sid, [_approval(value)])):
        assert [a.approval_id for a in await store.list_pending_approvals(sid)] == [value]
        assert await store.resolve_approval(sid, value) == "resolved"
    if await landed(lambda: store.save_checkpoint(sid, _checkpoint(value))):
        found = await store.get_checkpoint(sid, value)
        assert found is not None and found.checkpoint_id == value
    if not ok:  # each of a commit's ids on its own, so no other id's refusal hides it
        retried = f"inp-{uuid.uuid4().hex}"
        await store.append_messages(sid, MessageCommit(commit_id=retried))
        for alone in (
            MessageCommit(commit_id=value),
            MessageCommit(start_run=StartRun(run_id=value)),
            MessageCommit(fence_run_id=value),
            # A retry too: its ids are checked before its commit id finds the first result.
            MessageCommit(commit_id=retried, fence_run_id=value),
        ):
            await landed(partial(store.append_messages, sid, alone))
    started = MessageCommit(start_run=StartRun(run_id=value), commit_id=value)
    if await landed(lambda: store.append_messages(sid, started)):
        replay = await store.append_messages(sid, started)
        assert replay.replayed
        info = await store.get_session(sid)
        assert info is not None and info.current_run is not None
        assert info.current_run.run_id == value
        await store.append_messages(sid, MessageCommit(fence_run_id=value))
        await store.finish_run(sid, value, "completed")
    try:
        created = await store.create_session(value, user_id=value)
    except ValidationError:
        assert not ok, "an id within the limits was refused"
    else:
        assert ok, "an id outside the limits was accepted"
        assert created.id == value and created.user_id == value
        page = await store.list_sessions(value)
        assert [s.id for s in page.sessions] == [value]
        assert await store.delete_session(value)


def _item(key: str) -> StoredContextItem:
    return StoredContextItem(key=key, item=ContextItem(kind="notice", content="n"), at=at(0))


def _late(call_id: str) -> LateAnswer:
    return LateAnswer(call_id=call_id, tool_name="t", output=1, at=at(0))


def _approval(approval_id: str) -> PendingApproval:
    return PendingApproval(
        approval_id=approval_id, tool_name="t", tool_call_id="c", input={}, requested_at=at(0)
    )


def _checkpoint(checkpoint_id: str) -> Checkpoint:
    return Checkpoint(
        checkpoint_id=checkpoint_id, run_id="r", message_count=0, state={}, created_at=at(0)
    )


# Each edge of docs/limits.md, and the first value past it.
_JSON_EDGES: list[Any] = [
    nested(MAX_DEPTH - 2),
    nested(MAX_DEPTH - 1),
    nested(MAX_DEPTH),
    nested(MAX_DEPTH + 1),
    # The deepest container a list, not an object, on either side of the edge.
    nested(MAX_DEPTH - 1, []),
    nested(MAX_DEPTH, []),
    {"nul\x00key": "nul\x00value", "odd": list(ODD_TEXT[:2] + ODD_TEXT[4:])},
    [10**599, -(10**599), 1e308, 5e-324, 1.0, 1],
    10**600,
    -(10**600),
    float("nan"),
    float("inf"),
    {"s": "\ud800"},
    {"\udc00": 1},
    # Text on its own, so a record's text fields carry it unwrapped.
    "\ud800",
]
_ID_EDGES = [
    ID_EDGE,
    ID_EDGE + "c",
    "x" * 512,
    "x" * 513,
    "",
    "a\x00b",
    "\ud800",
    "\U0001f600" * 128,
]


class InputRules:
    """INP-1..INP-3: values and ids in, the same values and ids out."""

    @rule("INP-1")
    async def test_INP_1_hostile_json_reads_back_or_is_refused(
        self, store_factory: StoreFactory
    ) -> None:
        await anyio.to_thread.run_sync(_run_property, store_factory, hostile_json, _json_everywhere)

    @rule("INP-2")
    async def test_INP_2_hostile_ids_are_found_or_refused(
        self, store_factory: StoreFactory
    ) -> None:
        await anyio.to_thread.run_sync(_run_property, store_factory, hostile_ids, _id_everywhere)

    @rule("INP-3")
    async def test_INP_3_limits_hold_at_their_edges(self, store: SessionStateStore) -> None:
        for value in _JSON_EDGES:
            await _json_everywhere(store, value)
        for edge in _ID_EDGES:
            await _id_everywhere(store, edge)
