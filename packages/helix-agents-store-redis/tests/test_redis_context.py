"""History search on Redis: the literal prefilter, and search in bounded steps."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import Compaction, compile_pattern, required_literal
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis import _context as context_module

pytestmark = pytest.mark.anyio


def test_required_literals() -> None:
    assert required_literal(r"port: \d+") == "port: "
    assert required_literal(r"needle: 42") == "needle: 42"
    assert required_literal(r"colou?r") == "colo"  # the "u" is optional
    assert required_literal(r"error|warning") is None
    assert required_literal(r"(?i)error") is None
    assert required_literal(r"(abc)?def") == "def"
    assert required_literal(r"ab+cde") == "cde"
    assert required_literal(r"x\.y\.z") == "x.y.z"
    assert required_literal(r'say "hello"') is None  # quotes are escaped in the stored JSON


@given(
    st.text(alphabet="ab.*+?()|[]^$\\ ", min_size=1, max_size=8),
    st.text(alphabet="ab. ", max_size=12),
)
def test_a_line_that_matches_contains_the_literal(pattern: str, line: str) -> None:
    try:
        regex = compile_pattern(pattern)
    except ValueError:
        return
    literal = required_literal(pattern)
    if literal is not None and regex.search(line):
        assert literal in line


async def test_search_steps_cross_the_live_log_and_the_archive(
    standalone_factory: Callable[..., RedisStateStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(context_module, "SEARCH_STEP", 7)
    async with standalone_factory(max_messages=10) as store:
        sid = (await store.create_session()).id
        await store.append_messages(
            sid, MessageCommit(messages=(ChatMessage(role="user", content="needle 0"),))
        )
        await store.record_compaction(sid, Compaction(boundary=1, summary="s"))
        for i in range(1, 50):
            text = f"needle {i}" if i % 10 == 0 else f"hay {i}"
            await store.append_messages(
                sid, MessageCommit(messages=(ChatMessage(role="user", content=text),))
            )
        found = await store.search_history(sid, grep=r"needle \d+")
        assert [(h.index, h.archived) for h in found.hits] == [
            (40, False),
            (30, True),
            (20, True),
            (10, True),
            (0, True),
        ]
        capped = await store.search_history(sid, grep=r"needle \d+", limit=2)
        assert [h.index for h in capped.hits] == [40, 30] and capped.truncated
