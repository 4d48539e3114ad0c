"""What comes back is what went in: every field, never a shared object, every error's flags."""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable
from datetime import timedelta, timezone
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextMessage,
    LateAnswer,
    Message,
    MessageCountConflictError,
    PendingApproval,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    StoredContextItem,
    ValidationError,
    is_retryable,
)
from helix_agents.core.errors import (
    ApprovalNotFoundError,
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
    lookup,
)

from ._base import rule
from ._helpers import (
    CONTEXT,
    LATE,
    approval,
    at,
    checkpoint,
    commit,
    item,
    late,
    snapshot,
    start,
    user,
)

_FLAGS: dict[type[StateStoreError], tuple[str, bool]] = {
    SessionNotFoundError: ("state_session_not_found", False),
    SessionExistsError: ("state_session_exists", False),
    ValidationError: ("validation_error", False),
    RunSupersededError: ("state_run_superseded", False),
    MessageCountConflictError: ("state_concurrency_conflict", True),
    ContextItemDeliveryConflictError: ("state_concurrency_conflict", True),
    LateAnswerDeliveryConflictError: ("state_concurrency_conflict", True),
    ApprovalNotFoundError: ("state_approval_not_found", False),
}

# An instant with microseconds, in a zone other than UTC.
_ODD_TIME = at(3723.000417).astimezone(timezone(timedelta(hours=5, minutes=30)))


def _full_items() -> list[StoredContextItem]:
    """One item per kind, each with every optional field set."""
    shared: dict[str, Any] = {
        "source": "retriever",
        "pass": "second",
        "cursor": "c-7",
        "metadata": {"tags": ["x", {"deep": [1, 2.5, None, True]}]},
        "provider_options": {"anthropic": {"cache_control": {"type": "ephemeral"}}},
    }
    kinds: list[dict[str, Any]] = [
        {"kind": "instruction"},
        {"kind": "notice"},
        {"kind": "memory", "memory_ids": ["m1", "m2"]},
        {"kind": "tools", "enable": ["a"], "disable": ["b", "c"], "phase": "forced_completion"},
    ]
    return [
        StoredContextItem(
            key=f"full-{n}",
            item=ContextItem.model_validate({**kind, **shared, "content": f"c{n}"}),
            at=_ODD_TIME + timedelta(microseconds=n),
        )
        for n, kind in enumerate(kinds)
    ]


class FidelityRules:
    """MSG-6 on every read path, INP-1 on every optional field, ERR-1 on every refusal."""

    @rule("MSG-6")
    async def test_MSG_6_no_read_or_write_shares_a_mutable_object(
        self, store: SessionStateStore
    ) -> None:
        meta: dict[str, Any] = {"tags": ["a"]}
        sid = (await store.create_session(metadata=meta)).id
        parts: list[Any] = [{"type": "text", "text": "original"}]
        rows: list[Message] = [
            ChatMessage(role="user", content=parts),
            ContextMessage(kind="notice", content="n", metadata={"l": [1]}),
        ]
        await store.append_messages(sid, commit(*rows, start_run=start("r1")))
        [stored_item] = _full_items()[:1]
        answer = late("call-1", output={"l": [1]})
        wanted = approval("a1")
        saved = checkpoint("p1", 1, state={"l": [1]})
        await store.record_context_item(sid, stored_item)
        await store.record_late_answer(sid, answer)
        await store.add_pending_approvals(sid, [wanted])
        await store.save_checkpoint(sid, saved)
        before = await snapshot(store, sid)
        # What the caller passed in.
        for passed in (meta, parts, *rows, stored_item, answer, wanted, saved):
            _scribble(passed)
        assert await snapshot(store, sid) == before
        # What every read hands out.
        reads: list[Callable[[], Awaitable[Any]]] = [
            lambda: store.get_messages(sid),
            lambda: store.get_messages(sid, limit=2),
            lambda: _page_rows(store, sid, "asc"),
            lambda: _page_rows(store, sid, "desc"),
            lambda: _info_list(store.get_session(sid)),
            lambda: store.list_undelivered_context_items(sid),
            lambda: store.list_undelivered_late_answers(sid),
            lambda: store.list_pending_approvals(sid),
            lambda: store.list_checkpoints(sid),
            lambda: _one(store.get_checkpoint(sid, "p1")),
            lambda: _one(store.latest_checkpoint(sid)),
            lambda: store.page_checkpoints(sid),
        ]
        for read in reads:
            for got in await read():
                _scribble(got)
            assert await snapshot(store, sid) == before, read
        clone = await store.clone_session(sid)
        _scribble(clone)
        cloned = await snapshot(store, clone.id)
        for got in [*await store.get_messages(clone.id), *await store.list_checkpoints(clone.id)]:
            _scribble(got)
        assert await snapshot(store, clone.id) == cloned
        assert await snapshot(store, sid) == before

    @rule("INP-1")
    async def test_INP_1_every_optional_field_reads_back(self, store: SessionStateStore) -> None:
        sid = (await store.create_session(user_id="u", metadata={"a": {"b": [None, 1.5]}})).id
        items = _full_items()
        for record in items:
            await store.record_context_item(sid, record)
        assert await store.list_undelivered_context_items(sid) == items
        answer = LateAnswer(
            call_id="call-x", tool_name="t", output=[{"a": None}, 2, "s"], at=_ODD_TIME
        )
        await store.record_late_answer(sid, answer)
        assert await store.list_undelivered_late_answers(sid) == [answer]
        wanted = PendingApproval(
            approval_id="ap",
            tool_name="rm",
            tool_call_id="tc-9",
            input={"p": [1, {"q": False}]},
            requested_at=_ODD_TIME,
        )
        await store.add_pending_approvals(sid, [wanted])
        assert await store.list_pending_approvals(sid) == [wanted]
        # The rows that deliver the items carry every field too.
        rows = [record.item.to_message() for record in items]
        await store.append_messages(
            sid, commit(*rows, **CONTEXT.deliver(*((r.key, n) for n, r in enumerate(items))))
        )
        assert await store.get_messages(sid) == rows
        assert list((await store.page_messages(sid, order="desc")).messages) == rows[::-1]
        saved = Checkpoint(
            checkpoint_id="cp",
            run_id="run-z",
            message_count=2,
            state={"s": [1, "2"]},
            created_at=_ODD_TIME,
        )
        await store.save_checkpoint(sid, saved)
        assert await store.get_checkpoint(sid, "cp") == saved
        assert await store.latest_checkpoint(sid) == saved
        assert await store.list_checkpoints(sid) == [saved]
        clone = await store.clone_session(sid)
        assert clone.metadata == {"a": {"b": [None, 1.5]}} and clone.user_id == "u"
        assert await store.list_checkpoints(clone.id) == [saved]
        assert await store.get_messages(clone.id) == rows

    @rule("ERR-1")
    async def test_ERR_1_every_refusal_class_from_every_kind_of_call(
        self, store: SessionStateStore
    ) -> None:
        sid = (await store.create_session("s-flags")).id
        await store.append_messages(sid, commit(user(), start_run=start("r1")))
        calls: list[tuple[type[StateStoreError], Callable[[], Awaitable[object]]]] = [
            (SessionNotFoundError, lambda: store.append_messages("missing", commit(user()))),
            (SessionNotFoundError, lambda: store.record_late_answer("missing", late("c"))),
            (SessionNotFoundError, lambda: store.list_checkpoints("missing")),
            (SessionNotFoundError, lambda: store.finish_run("missing", "r1", "completed")),
            (SessionNotFoundError, lambda: store.clone_session("missing")),
            (SessionExistsError, lambda: store.create_session(sid)),
            (SessionExistsError, lambda: store.clone_session(sid, sid)),
            (ValidationError, lambda: store.page_messages(sid, limit=0)),
            (ValidationError, lambda: store.save_checkpoint(sid, checkpoint("c", 9))),
            (
                ValidationError,
                lambda: store.append_messages(sid, commit(user(), **LATE.deliver(("x", 4)))),
            ),
            (ValidationError, lambda: store.pop_messages(sid, 0)),
            (RunSupersededError, lambda: store.finish_run(sid, "r0", "failed")),
            (RunSupersededError, lambda: store.truncate_messages(sid, 0, fence_run_id="r0")),
            (
                RunSupersededError,
                lambda: store.record_context_item(sid, item("k"), fence_run_id="r0"),
            ),
            (
                RunSupersededError,
                lambda: store.add_pending_approvals(sid, [approval("a")], fence_run_id="r0"),
            ),
            (
                RunSupersededError,
                lambda: store.save_checkpoint(sid, checkpoint("c", 0), fence_run_id="r0"),
            ),
            (
                MessageCountConflictError,
                lambda: store.append_messages(sid, commit(user(), expect_message_count=7)),
            ),
            (
                MessageCountConflictError,
                lambda: store.replace_messages(sid, 0, [], expect_message_count=7),
            ),
            (
                ContextItemDeliveryConflictError,
                lambda: store.append_messages(sid, commit(user(), **CONTEXT.deliver(("x", 0)))),
            ),
            (
                LateAnswerDeliveryConflictError,
                lambda: store.append_messages(sid, commit(user(), **LATE.deliver(("x", 0)))),
            ),
            (ApprovalNotFoundError, lambda: store.resolve_approval(sid, "nope")),
        ]
        before = await snapshot(store, sid)
        for cls, call in calls:
            with pytest.raises(cls) as caught:
                await call()
            err = caught.value
            assert (err.code, err.retryable, is_retryable(err)) == (*_FLAGS[cls], _FLAGS[cls][1]), (
                cls
            )
            assert isinstance(err, lookup(err.code))
            assert err.session_id in (sid, "missing") and err.session_id in str(err), cls
            copy = pickle.loads(pickle.dumps(err))
            assert (type(copy), copy.code, copy.retryable, str(copy)) == (
                type(err),
                err.code,
                err.retryable,
                str(err),
            )
        assert await snapshot(store, sid) == before


async def _page_rows(store: SessionStateStore, sid: str, order: Any) -> list[Any]:
    return list((await store.page_messages(sid, order=order)).messages)


async def _info_list(call: Awaitable[Any]) -> list[Any]:
    return [await call]


async def _one(call: Awaitable[Any]) -> list[Any]:
    got = await call
    assert got is not None
    return [got]


def _scribble(value: Any) -> None:
    """Change every mutable container reachable from a read's result, in place."""
    if isinstance(value, dict):
        value["scribbled"] = True
        for inner in list(value.values()):
            _scribble(inner)
    elif isinstance(value, list):
        for inner in value:
            _scribble(inner)
        value.append("scribbled")
    elif hasattr(value, "__pydantic_fields__"):
        for name in type(value).model_fields:
            _scribble(getattr(value, name))
        extra = getattr(value, "__pydantic_extra__", None)
        if extra:
            _scribble(extra)
