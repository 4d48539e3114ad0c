"""Types validate at the boundary, are immutable, and round-trip through JSON."""

from __future__ import annotations

import json
from datetime import datetime

import pydantic
import pytest

from helix_agents.core import (
    ChatMessage,
    CommitResult,
    ContextItem,
    ContextMessage,
    LateAnswer,
    MessageCommit,
    StoredContextItem,
    ValidationError,
)
from helix_agents.core.backend import dump_message_json, parse_message_json
from helix_agents.core.messages import describe, dump_message, parse_message


@pytest.mark.parametrize(
    "row",
    [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}], "id": "m1"},
        {"role": "tool", "content": [{"type": "text", "text": "x"}], "tool_call_id": "c1"},
        {"role": "context", "kind": "memory", "content": "m", "memory_ids": ["a"]},
        {
            "role": "context",
            "kind": "tools",
            "content": "",
            "enable": ["t"],
            "phase": "forced_completion",
            "pass": "p1",
            "metadata": {"k": [1, None]},
        },
    ],
)
def test_rows_round_trip_through_json(row: dict[str, object]) -> None:
    parsed = parse_message(row)
    again = parse_message(json.loads(json.dumps(dump_message(parsed))))
    assert again == parsed
    assert dump_message(again) == row
    from_text = parse_message_json(dump_message_json(parsed))
    assert from_text == parsed
    assert type(from_text) is type(parsed)
    assert parse_message_json(json.dumps(row).encode()) == parsed


def test_parse_message_json_refuses_bad_rows() -> None:
    for text in ('{"role": "robot", "content": "x"}', '{"role": "context", "content": "x"}', "[]"):
        with pytest.raises(ValidationError):
            parse_message_json(text)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"role": "robot", "content": "x"}, "role"),
        ({"role": "context", "content": "x"}, "kind"),
        ({"role": "context", "kind": "memory", "content": "x"}, "memory_ids"),
        ({"role": "context", "kind": "notice", "content": "x", "enable": ["t"]}, "enable"),
        ({"role": "user"}, "content"),
        ({"role": "context", "kind": "notice", "content": "x", "bogus": 1}, "bogus"),
    ],
)
def test_parse_message_names_the_field(row: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError, match=field) as caught:
        parse_message(row)
    assert caught.value.code == "validation_error"


def test_not_an_object_is_refused() -> None:
    with pytest.raises(ValidationError):
        parse_message(["role", "user"])


def test_naive_datetime_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="at"):
        StoredContextItem(
            key="k", item=ContextItem(kind="notice", content="x"), at=datetime(2026, 1, 1)
        )
    with pytest.raises(ValidationError):
        LateAnswer(call_id="c", tool_name="t", output=1, at=datetime(2026, 1, 1))


def test_values_are_immutable() -> None:
    row = ChatMessage(role="user", content="hi")
    with pytest.raises(pydantic.ValidationError):
        row.content = "changed"  # type: ignore[misc]
    commit = MessageCommit(messages=[row])
    assert isinstance(commit.messages, tuple)


def test_item_and_row_convert_both_ways() -> None:
    item = ContextItem(kind="memory", content="likes tea", memory_ids=["m1"], source="mem")
    row = item.to_message()
    assert isinstance(row, ContextMessage)
    assert row.role == "context"
    assert row.to_item() == item


def _through_init(
    model: type[pydantic.BaseModel], **kwargs: object
) -> pydantic.BaseModel | tuple[str, str]:
    """``model(**kwargs)`` the generic way: pydantic's own ``__init__`` on a bare instance."""
    made = model.__new__(model)
    try:
        pydantic.BaseModel.__init__(made, **kwargs)
    except pydantic.ValidationError as exc:
        return ("refused", describe(exc))
    return made


@pytest.mark.parametrize(
    ("model", "kwargs"),
    [
        (CommitResult, {"first_index": 3, "message_count": 6}),
        (CommitResult, {"first_index": 3, "message_count": 6, "replayed": True}),
        (CommitResult, {"first_index": "3", "message_count": 6}),
        (CommitResult, {"first_index": 3}),
        (ChatMessage, {"role": "user", "content": "hi", "name": "n"}),
        (ChatMessage, {"role": "robot", "content": "hi"}),
        (ContextMessage, {"kind": "notice", "content": "x"}),
        (ContextMessage, {"kind": "memory", "content": "x"}),
        (ContextItem, {"kind": "tools", "content": "", "pass": "p", "enable": ["t"]}),
        (MessageCommit, {"messages": [ChatMessage(role="user", content="a")], "commit_id": "c"}),
        (MessageCommit, {"expect_message_count": -1}),
    ],
)
def test_constructing_a_value_matches_pydantic_init(
    model: type[pydantic.BaseModel], kwargs: dict[str, object]
) -> None:
    # Values are built without BaseModel.__init__ (messages._ValueMeta); same value, same
    # fields set (what stored rows keep), same refusal.
    expected = _through_init(model, **kwargs)
    if isinstance(expected, tuple):
        with pytest.raises(ValidationError) as caught:
            model(**kwargs)
        assert str(caught.value) == f"invalid {model.__name__}: {expected[1]}"
        return
    built = model(**kwargs)
    assert type(built) is model
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)


def test_a_positional_argument_is_still_refused() -> None:
    with pytest.raises(TypeError):
        CommitResult(3, 6)  # type: ignore[call-arg]
