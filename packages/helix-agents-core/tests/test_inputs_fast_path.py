"""The fast paths of check_record and dump_message_json agree with the generic ones on
every input, valid or not."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix_agents.core import (
    ChatMessage,
    ContextItemDelivery,
    ContextMessage,
    LateAnswerDelivery,
    MessageCommit,
    ScopedStateDelta,
    StartRun,
    ValidationError,
)
from helix_agents.core.backend import dump_message_json
from helix_agents.core.inputs import _check_record, _storable, check_record, storable_rows_json
from helix_agents.core.limits import MAX_ID_BYTES, MAX_INT_DIGITS, MAX_JSON_DEPTH
from helix_agents.core.messages import _dump_json
from helix_agents.core.rules import coerce, coerce_commit

# Text that may hold lone surrogates and NUL, which the checks refuse in places.
_text = st.text(st.characters(blacklist_categories=()), max_size=8) | st.sampled_from(
    ["", "ok", "caf\u00e9", "\x00", "a\ud800", "x" * MAX_ID_BYTES, "x" * (MAX_ID_BYTES + 1)]
)
_ints = st.integers(-5, 5) | st.sampled_from(
    [10**MAX_INT_DIGITS - 1, 10**MAX_INT_DIGITS, -(10**MAX_INT_DIGITS)]
)
_scalars = (
    st.none() | st.booleans() | _ints | st.floats(allow_nan=True, allow_infinity=True) | _text
)
_json: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


# What the checks must refuse or treat apart: not JSON, odd containers, subclasses.
_odd = st.sampled_from(
    [
        set(),
        frozenset({1}),
        b"bytes",
        (),
        (1, 2),
        {1: "int key"},
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 1),
        object(),
        _deep(MAX_JSON_DEPTH - 1),
        _deep(MAX_JSON_DEPTH),
        _deep(MAX_JSON_DEPTH + 1),
        [float("inf")],
        {"k": {"\ud800": 1}},
    ]
)
_values = _json | _odd
_ids = st.none() | _text | _odd | _ints


@st.composite
def _chat_rows(draw: st.DrawFn) -> ChatMessage:
    fields: dict[str, Any] = draw(
        st.dictionaries(st.sampled_from(["tool_calls", "name", "x"]), _values)
    )
    fields["role"] = draw(st.sampled_from(["user", "assistant", "tool", "robot"]) | _values)
    fields["content"] = draw(_values)
    fields["id"] = draw(_ids)
    return ChatMessage.model_construct(**fields)


@st.composite
def _context_rows(draw: st.DrawFn) -> ContextMessage:
    return ContextMessage.model_construct(
        kind=draw(st.sampled_from(["notice", "memory"])),
        content=draw(_text),
        memory_ids=draw(st.none() | st.lists(_text, max_size=2)),
        metadata=draw(st.none() | _values),
    )


_rows = _chat_rows() | _context_rows()


@st.composite
def _commits(draw: st.DrawFn) -> MessageCommit:
    rows = draw(st.lists(_rows, max_size=3))
    fields: dict[str, Any] = dict(
        messages=draw(st.sampled_from([tuple, list]))(rows),
        start_run=draw(
            st.none()
            | st.builds(
                lambda run_id, rewind: StartRun.model_construct(run_id=run_id, rewind_to=rewind),
                _ids,
                st.none() | _ints,
            )
        ),
        fence_run_id=draw(_ids),
        expect_message_count=draw(st.none() | _ints | _odd),
        deliver_context_items=tuple(
            ContextItemDelivery.model_construct(key=key, row_offset=offset)
            for key, offset in draw(st.lists(st.tuples(_ids, _ints), max_size=2))
        ),
        deliver_late_answers=draw(
            st.sampled_from([(), []])
            | st.builds(
                lambda call_id: (
                    LateAnswerDelivery.model_construct(call_id=call_id, row_offset=0),
                ),
                _ids,
            )
        ),
        commit_id=draw(_ids),
        scoped_state=tuple(
            ScopedStateDelta.model_construct(scope="user", owner=owner, changes=changes)
            for owner, changes in draw(st.lists(st.tuples(_ids, _values), max_size=2))
        ),
    )
    return MessageCommit.model_construct(**fields)


def _outcome(check: Any) -> tuple[Any, ...]:
    try:
        check()
    except ValidationError as exc:
        return ("refused", str(exc), exc.session_id, exc.code)
    except Exception as exc:  # whatever the generic walk raises, the same
        return ("raised", type(exc).__name__, str(exc))
    return ("stored",)


def _same(record: Any) -> None:
    generic = _outcome(lambda: _check_record(record, "s1", None))
    assert _outcome(lambda: check_record(record, "s1")) == generic
    if _storable(record):
        assert generic == ("stored",)
    if isinstance(record, MessageCommit):
        _same_commit(record, generic)


def _same_commit(commit: MessageCommit, generic: tuple[Any, ...]) -> None:
    """The one walk of storable_rows_json passes only what the generic check stores, and
    writes each row as dump_message_json does; coerce_commit refuses as coerce does."""
    texts = storable_rows_json(commit)
    if texts is not None:
        assert generic == ("stored",)
        assert texts == [_dump_json(row, "s1") for row in commit.messages]
    assert _outcome(lambda: coerce_commit(commit, "s1")) == _outcome(
        lambda: coerce(MessageCommit, commit, "s1")
    )


@settings(max_examples=600, deadline=None)
@given(_commits())
def test_a_commit_is_judged_the_same_by_both_paths(commit: MessageCommit) -> None:
    _same(commit)


@settings(max_examples=400, deadline=None)
@given(_rows)
def test_a_row_is_judged_the_same_by_both_paths(row: ChatMessage | ContextMessage) -> None:
    _same(row)


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=50),
    st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2), max_size=2),
    st.integers(0, 10**6),
)
def test_valid_commits_take_the_fast_path(text: str, calls: list[Any], count: int) -> None:
    commit = MessageCommit(
        messages=[
            ChatMessage(role="user", content=text),
            ChatMessage(role="assistant", content=None, tool_calls=calls),
            ChatMessage(role="tool", content=[{"type": "text", "text": text}], tool_call_id="c"),
            ContextMessage(kind="notice", content=text),
        ],
        expect_message_count=count,
        commit_id="c1",
        start_run=StartRun(run_id="r1"),
    )
    assert _storable(commit)
    assert check_record(commit, "s1") is commit


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=50),
    st.none() | st.text(max_size=5),
    st.lists(
        st.dictionaries(st.text(max_size=5), st.text(max_size=5) | st.integers(-9, 9)), max_size=2
    ),
    st.sampled_from([None, 0, 7]),
)
def test_chat_commits_take_the_one_walk(
    text: str, name: str | None, calls: Any, count: Any
) -> None:
    commit = MessageCommit(
        messages=[
            ChatMessage(role="user", content=text, name=name),
            ChatMessage(role="assistant", content=None, tool_calls=calls),
            ChatMessage(role="tool", content=text, tool_call_id="c", id="t1"),
        ],
        expect_message_count=count,
        fence_run_id="r1",
    )
    texts = storable_rows_json(commit)
    assert texts == [_dump_json(row, "s1") for row in commit.messages]
    assert coerce_commit(commit, "s1") == (commit, texts)


def test_the_one_walk_leaves_other_commits_to_coerce() -> None:
    chat = ChatMessage(role="user", content="hi")
    for commit in (
        MessageCommit(messages=[chat, ContextMessage(kind="notice", content="n")]),
        MessageCommit(messages=[ChatMessage(role="user", content=[{"type": "text"}])]),
        MessageCommit(messages=[chat], commit_id="caf\u00e9"),  # an id the fast path leaves
    ):
        assert storable_rows_json(commit) is None
        assert coerce_commit(commit, "s1") == (commit, None)
    assert coerce_commit({"messages": [{"role": "user", "content": "hi"}]}, "s1") == (
        MessageCommit(messages=[chat]),
        None,
    )


_PLAIN = MessageCommit(
    messages=[
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", content=None, tool_calls=[{"id": "c", "type": "f"}]),
    ],
    expect_message_count=2,
)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from([*MessageCommit.model_fields, "row.content", "row.id", "row.extra"]),
    _values | _ids,
)
def test_a_plain_commit_with_one_value_changed_is_judged_the_same(where: str, value: Any) -> None:
    # Everything else passes, so the fast path must judge this one value exactly.
    if where.startswith("row."):
        fields: dict[str, Any] = {"role": "user", "content": "hi", where[4:]: value}
        row = ChatMessage.model_construct(**fields)
        commit = _PLAIN.model_copy(update={"messages": (_PLAIN.messages[0], row)})
    else:
        commit = _PLAIN.model_copy(update={where: value})
    _same(commit)


@pytest.mark.parametrize(
    ("row", "named"),
    [
        (ChatMessage.model_construct(role="user", content="a\ud800"), "messages[1].content"),
        (ChatMessage.model_construct(role="user", content="a", x={1: 2}), "messages[1].x"),
        (
            ChatMessage.model_construct(role="user", content=[{"n": float("nan")}]),
            "messages[1].content",
        ),
    ],
)
def test_a_refusal_still_names_its_path(row: ChatMessage, named: str) -> None:
    ok = ChatMessage(role="user", content="fine")
    commit = MessageCommit.model_construct(messages=(ok, row))
    with pytest.raises(ValidationError) as caught:
        check_record(commit, "s1")
    assert str(caught.value).startswith(f"session 's1': {named}")


def _dumped(dump: Any) -> tuple[Any, ...]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _outcome(dump)
        try:
            text = dump()
        except Exception:  # the outcome above holds it
            text = None
    return (outcome, text, [str(w.message) for w in caught])


@settings(max_examples=800, deadline=None)
@given(
    _chat_rows()
    | st.builds(
        lambda text, calls: ChatMessage(role="assistant", content=text, tool_calls=calls),
        st.none() | st.text(st.characters(blacklist_categories=())),
        _json,
    )
)
def test_a_chat_row_is_dumped_the_same_by_both_paths(row: ChatMessage) -> None:
    generic = _dumped(lambda: _dump_json(row, "s1"))
    assert _dumped(lambda: dump_message_json(row, "s1")) == generic
