"""The one definition of storable input: ids, JSON values, records, cursors (docs/limits.md)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StartRun,
    StoredContextItem,
    ValidationError,
)
from helix_agents.core.backend import check_id, decode_message_cursor, encode_message_cursor
from helix_agents.core.cursors import decode_sessions_cursor, encode_sessions_cursor
from helix_agents.core.inputs import check_json, check_record
from helix_agents.core.limits import MAX_CURSOR_CHARS, MAX_ID_BYTES, MAX_JSON_DEPTH
from helix_agents.core.rules import check_finish_status, check_new_session, coerce, coerce_all

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _cursor(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "value",
    ["x" * MAX_ID_BYTES, "\u20ac" * 170 + "ab", "\U0001f600" * 128, "a b/c{d}", "\u2028"],
)
def test_ids_within_limits_are_accepted(value: str) -> None:
    assert check_id(value, "key") == value


@pytest.mark.parametrize(
    "value",
    ["", "x" * (MAX_ID_BYTES + 1), "\u20ac" * 171, "a\x00b", "\ud800", b"s", 5, ["a"], None, True],
)
def test_ids_outside_limits_are_validation_errors_naming_the_field(value: object) -> None:
    with pytest.raises(ValidationError, match="approval_id") as refused:
        check_id(value, "approval_id", session_id="s1")
    assert refused.value.session_id == "s1"
    assert not refused.value.retryable


def test_ten_kilobyte_id_is_refused_before_any_index_sees_it() -> None:
    with pytest.raises(ValidationError, match="10240 bytes"):
        check_id("k" * 10_240, "session_id")


@pytest.mark.parametrize(
    "value",
    [
        _nested(MAX_JSON_DEPTH),
        {"nul\x00": "a\x00b", "odd": "e\u0301\u202e\ufdd0\uffff\U0010ffff\u2028"},
        [10**599, -(10**599), 1e308, 5e-324, -0.0, True, None],
        {"wide": {str(i): i for i in range(5000)}},
    ],
)
def test_json_within_limits_is_accepted(value: Any) -> None:
    assert check_json(value, "state") is value


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (_nested(MAX_JSON_DEPTH + 1), "deeper than 100"),
        (float("nan"), "finite"),
        ({"a": [float("inf")]}, "finite"),
        (-float("inf"), "finite"),
        (10**600, "600 digits"),
        ("a\udc80", "lone surrogate"),
        ({"\ud800": 1}, "lone surrogate"),
        ({1: "x"}, "keys must be strings"),
        ({"when": T0}, "datetime is not a JSON value"),
        (b"bytes", "bytes is not a JSON value"),
        ({"s": {1, 2}}, "set is not a JSON value"),
    ],
)
def test_json_outside_limits_is_a_validation_error(value: Any, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        check_json(value, "state", session_id="s1")


def test_refusal_names_the_path_inside_the_value() -> None:
    with pytest.raises(ValidationError) as refused:
        check_json({"a": [0, {"b": float("nan")}]}, "output", session_id="s1")
    assert str(refused.value) == (
        "session 's1': output['a'][1]['b']: nan is not a JSON number (numbers must be finite)"
    )


def test_deep_provider_field_refused_before_write() -> None:
    row = ChatMessage(role="assistant", content=None, tool_calls=_nested(250))
    with pytest.raises(ValidationError, match=r"messages\[0\]\.tool_calls"):
        coerce(MessageCommit, MessageCommit(messages=(row,)), "s1")


def test_nan_in_checkpoint_state_refused() -> None:
    checkpoint = Checkpoint(
        checkpoint_id="p", run_id="r", message_count=0, state={"x": float("nan")}, created_at=T0
    )
    with pytest.raises(ValidationError, match=r"state\['x'\]"):
        coerce(Checkpoint, checkpoint, "s1")


@pytest.mark.parametrize(
    "record",
    [
        LateAnswer(call_id="c", tool_name="t", output=float("inf"), at=T0),
        PendingApproval(
            approval_id="a", tool_name="t", tool_call_id="c", input=[_nested(101)], requested_at=T0
        ),
        StoredContextItem(
            key="k", item=ContextItem(kind="notice", content="c", metadata={"m": "\ud800"}), at=T0
        ),
        StoredContextItem(key="k", item=ContextItem(kind="notice", content="\udfff"), at=T0),
        Checkpoint(checkpoint_id="\ud800", run_id="r", message_count=0, state={}, created_at=T0),
        MessageCommit(start_run=StartRun(run_id="r\x00")),
        MessageCommit(commit_id="c" * 513),
        MessageCommit(
            messages=(ContextMessage(kind="memory", content="c", memory_ids=["\ud800"]),)
        ),
        MessageCommit(messages=(ContextMessage(kind="notice", content="c", cursor="\ud800"),)),
    ],
    ids=lambda r: type(r).__name__,
)
def test_records_outside_limits_are_refused_naming_the_session(record: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        check_record(record, "s1")
    assert refused.value.session_id == "s1"


def test_nul_in_text_and_values_is_accepted() -> None:
    row = ContextMessage(
        kind="memory", content="a\x00", memory_ids=["m\x00"], metadata={"k\x00": "v\x00"}
    )
    assert check_record(MessageCommit(messages=(row,)), "s1").messages == (row,)


def test_ids_in_models_are_strict_strings() -> None:
    with pytest.raises(ValidationError, match="key"):
        StoredContextItem(key=b"k", item=ContextItem(kind="notice", content="c"), at=T0)
    with pytest.raises(ValidationError, match="fence_run_id"):
        MessageCommit(fence_run_id=b"r1")


def test_session_metadata_is_checked_and_copied() -> None:
    inner: list[Any] = [1]
    sid, stored = check_new_session("s1", "u1", {"nested": {"list": inner}})
    inner.append(2)
    assert (sid, stored) == ("s1", {"nested": {"list": [1]}})
    for bad in ({"x": float("nan")}, {"x": _nested(101)}, [1], "x"):
        with pytest.raises(ValidationError, match="metadata"):
            check_new_session("s1", None, bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="user_id"):
        check_new_session("s1", b"u1", None)  # type: ignore[arg-type]


def test_approvals_must_be_a_sequence() -> None:
    for bad in (5, None, "ab", b"ab"):
        with pytest.raises(ValidationError, match="approvals"):
            coerce_all(PendingApproval, bad, "s1", "approvals")


def test_unhashable_status_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        check_finish_status("s1", ["completed"])  # type: ignore[arg-type]


def test_deep_cursor_is_a_validation_error_not_a_recursion_error() -> None:
    deep = base64.urlsafe_b64encode(b"[" * 1100 + b"]" * 1100).decode()
    with pytest.raises(ValidationError, match="malformed"):
        decode_message_cursor("s1", "asc", deep)
    with pytest.raises(ValidationError, match="malformed"):
        decode_sessions_cursor("u1", deep)


@pytest.mark.parametrize(
    "cursor",
    [
        5,
        "\ud800",
        "é",
        "A" * (MAX_CURSOR_CHARS + 1),
        _cursor({"v": True, "s": "s1", "o": "asc", "i": 1}),
        _cursor({"v": 1, "s": "s1", "o": "asc", "i": 2**63}),
        _cursor({"v": 1, "s": "s1", "o": "asc", "i": 1.0}),
    ],
)
def test_forged_message_cursors_are_validation_errors(cursor: Any) -> None:
    with pytest.raises(ValidationError):
        decode_message_cursor("s1", "asc", cursor)


@pytest.mark.parametrize(
    "fields",
    [{"t": "0001-01-01T00:00:00+14:00"}, {"id": "\ud800"}, {"id": "a\x00b"}, {"id": 5}],
)
def test_forged_listing_cursors_are_validation_errors(fields: dict[str, object]) -> None:
    payload = {"v": 1, "u": "u1", "t": "2026-01-01T00:00:00+00:00", "id": "s1", **fields}
    with pytest.raises(ValidationError):
        decode_sessions_cursor("u1", _cursor(payload))


def test_genuine_cursors_of_the_longest_ids_fit() -> None:
    worst = "\x01" * MAX_ID_BYTES
    listing = encode_sessions_cursor(worst, T0, worst)
    assert len(listing) <= MAX_CURSOR_CHARS
    assert decode_sessions_cursor(worst, listing) == (T0, worst)
    page = encode_message_cursor(worst, "desc", 2**62)
    assert decode_message_cursor(worst, "desc", page) == 2**62


@pytest.mark.parametrize("bad", [True, "3", 3.0])
def test_counts_and_offsets_in_models_are_strict_ints(bad: Any) -> None:
    with pytest.raises(ValidationError, match="rewind_to"):
        StartRun(run_id="r", rewind_to=bad)
    with pytest.raises(ValidationError, match="expect_message_count"):
        MessageCommit(expect_message_count=bad)
    with pytest.raises(ValidationError, match="row_offset"):
        ContextItemDelivery(key="k", row_offset=bad)
    with pytest.raises(ValidationError, match="message_count"):
        Checkpoint(checkpoint_id="p", run_id="r", message_count=bad, state={}, created_at=T0)
