"""History matching: the shortcuts a search takes never lose a hit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from helix_agents.core import ChatMessage, ContextMessage, Message
from helix_agents.core.context import (
    HistoryQuery,
    compile_pattern,
    required_literal,
    row_text,
    row_tool_names,
)
from helix_agents.core.messages import dump_message

ROWS: list[Message] = [
    ChatMessage(role="user", content="plain text\nsecond line"),
    ChatMessage(role="user", content=[{"type": "text", "text": "part one"}, {"type": "image"}]),
    ChatMessage(
        role="assistant",
        content=None,
        tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"a": 1}'}}
        ],
    ),
    ChatMessage(role="tool", content="done", tool_call_id="c1", name="sh"),
    ContextMessage(kind="notice", content="a notice"),
]


def test_CS_10_a_row_and_its_stored_object_read_the_same() -> None:
    for row in ROWS:
        assert row_text(row) == row_text(dump_message(row))
        assert row_tool_names(row) == row_tool_names(dump_message(row))
    assert row_text(ROWS[2]) == 'sh({"a": 1})'
    assert row_tool_names(ROWS[3]) == ["sh"]


@given(
    st.text(alphabet="ab.*+?()|[]^$\\AzBbs ", min_size=1, max_size=8),
    st.lists(st.text(alphabet="ab \t", max_size=6), min_size=1, max_size=4),
)
def test_CS_10_the_whole_text_search_keeps_every_row_with_a_matching_line(
    pattern: str, lines: list[str]
) -> None:
    try:
        regex = compile_pattern(pattern)
    except ValueError:
        return
    query = HistoryQuery.matching(pattern, None)
    row = ChatMessage(role="user", content="\n".join(lines))
    matching = [n for n, line in enumerate(lines, 1) if regex.search(line)]
    hit = query.hit(0, row, archived=False)
    if matching:
        assert hit is not None and hit.line_number == matching[0]
        literal = required_literal(pattern)
        assert literal is None or literal in lines[matching[0] - 1]
    else:
        assert hit is None
