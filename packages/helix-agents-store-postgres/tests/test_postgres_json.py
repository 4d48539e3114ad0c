"""The JSON codec: json.dumps where jsonb keeps the text, the careful writer where it would not."""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import psycopg
import pytest

from helix_agents.core import ChatMessage, MessageCommit, ValidationError
from helix_agents.core.backend import coerce_commit
from helix_agents.core.messages import dump_message
from helix_agents.store_postgres import _json

pytestmark = pytest.mark.anyio

_EDGE_FLOATS = [
    1e100,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1e16,
    1e-05,
    0.1,
    -1e-07,
    123456789012345678.0,
    9007199254740993.0,
    -0.5,
]


def _random_floats(count: int) -> list[float]:
    rng = random.Random(20261130)
    found: list[float] = []
    while len(found) < count:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(value):
            found.append(value)
    return found


def test_dumps_uses_plain_json_unless_jsonb_would_alter_it() -> None:
    """Plain values are json.dumps' text; exponents, NUL and the escape character are rewritten."""
    plain = {"a": [1, 2.5, "x e+1", None, True], "b": {"c": "é"}}
    assert _json.dumps(plain) == json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
    assert _json.dumps({"f": 1e100}) == '{"f":1' + "0" * 100 + ".0}"
    assert _json.dumps({"f": 1e-05}) == '{"f":0.00001}'
    assert _json.dumps(["a\x00b"]) == '["a\ue000\ue002b"]'
    assert _json.dumps(["\ue000"]) == '["\ue000\ue001"]'
    # Text that only looks like an exponent or an escaped NUL is written as it is.
    assert json.loads(_json.dumps(["1e+5", "\\u0000"])) == ["1e+5", "\\u0000"]
    with pytest.raises(ValueError, match="not JSON compliant"):
        _json.dumps([math.inf])


async def test_values_round_trip_through_jsonb_text(pg_url: str) -> None:
    """dumps -> jsonb -> text -> loads / parse_row gives back the value, on both paths."""
    floats = _EDGE_FLOATS + _random_floats(300)
    rows = [
        ChatMessage(role="user", content="plain", extra={"f": floats, "i": [10**30, -7]}),
        ChatMessage(role="tool", content="n\x00l \ue000", tool_call_id="c", extra={"f": floats}),
    ]
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        for row in rows:
            cur = await conn.execute("SELECT %s::jsonb::text", (_json.dumps(dump_message(row)),))
            found = await cur.fetchone()
            assert found is not None
            back = _json.parse_row(found[0])
            assert back == row
            assert back.model_extra is not None
            assert [repr(v) for v in back.model_extra["extra"]["f"]] == [repr(v) for v in floats]
            assert _json.loads(found[0]) == dump_message(row)


async def test_store_reads_back_floats_exactly(open_store: Any) -> None:
    """Rows with floats jsonb prints positionally read back exactly, by get and by page."""
    floats = _EDGE_FLOATS + _random_floats(100)
    row = ChatMessage(role="assistant", content="ok", extra={"f": floats, "n": 10**30})
    async with open_store() as store:
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=(row, row)))
        got = await store.get_messages("s", limit=1)
        paged = (await store.page_messages("s", order="desc")).messages
        for back in (*got, *paged):
            assert back == row
            assert back.model_extra is not None
            assert all(type(v) is float for v in back.model_extra["extra"]["f"])
            assert back.model_extra["extra"]["f"] == floats


def _texts(rows: list[ChatMessage]) -> list[str] | None:
    _, texts = coerce_commit(MessageCommit(messages=tuple(rows)))
    return texts


def test_dump_rows_sends_core_texts_as_dumps_would_store_them() -> None:
    """core's one-walk texts go to jsonb as they are when jsonb keeps them: the same values."""
    rows = [
        ChatMessage(role="user", content="plain é \n"),
        ChatMessage(role="assistant", content=None, tool_calls=[{"id": "c", "n": [1, 2.5]}]),
        # Text that looks like an exponent, but not where a number could stand.
        ChatMessage(role="tool", content="call_8e2f 12e4", tool_call_id="c"),
    ]
    texts = _texts(rows)
    assert texts is not None
    text = _json.dump_rows(rows, texts)
    assert text == "[" + ",".join(texts) + "]"
    assert json.loads(text) == json.loads(_json.dumps([dump_message(m) for m in rows]))


@pytest.mark.parametrize(
    ("row", "altered"),
    [
        (ChatMessage(role="user", content="a\x00b"), True),
        (ChatMessage(role="user", content="\ue000"), True),
        (ChatMessage(role="user", content="x", extra={"f": 1e100}), True),
        (ChatMessage(role="user", content="x", extra={"f": [1e16, -1e-07]}), True),
        # Only looks like an exponent: the careful path costs more, and is still right.
        (ChatMessage(role="user", content="call 12e+4"), False),
    ],
)
def test_dump_rows_leaves_what_jsonb_would_alter_to_dumps(row: ChatMessage, altered: bool) -> None:
    """A NUL, the escape character or a float's exponent (1e+100 in pydantic_core's text too)."""
    texts = _texts([row])
    assert texts is not None
    sent = _json.dump_rows([row], texts)
    assert sent == _json.dumps([dump_message(row)])
    assert (sent != "[" + ",".join(texts) + "]") is altered


async def test_parse_rows_is_parse_row_of_each(pg_url: str) -> None:
    """Rows validated in one call are the rows one by one; an escaped row, a row that does
    not validate, each goes row by row (the same error as alone)."""
    rows = [
        ChatMessage(role="user", content="u"),
        ChatMessage(role="assistant", content=None, tool_calls=[{"id": "c"}], name="n"),
        ChatMessage(role="tool", content="n\x00l \ue000", tool_call_id="c"),
    ]
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        texts = []
        for row in rows:
            cur = await conn.execute("SELECT %s::jsonb::text", (_json.dumps(dump_message(row)),))
            found = await cur.fetchone()
            assert found is not None
            texts.append(found[0])
    assert _json.parse_rows(texts) == [_json.parse_row(t) for t in texts] == rows
    assert _json.parse_rows(texts[:2]) == rows[:2]
    bad = [texts[0], '{"role": "user"}']
    with pytest.raises(ValidationError) as batch:
        _json.parse_rows(bad)
    with pytest.raises(ValidationError) as alone:
        _json.parse_row(bad[1])
    assert str(batch.value) == str(alone.value)
