"""The runtime helpers: lowering context rows and delivering queues."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextItem,
    ContextMessage,
    LateAnswer,
    StoredContextItem,
    deliver_context_items,
    deliver_late_answer_notices,
    lower_context_rows,
)
from helix_agents.core.runtime import context_row_text
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio
AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_lowering_turns_context_rows_into_user_turns() -> None:
    ctx = ContextMessage(kind="memory", content="likes tea", memory_ids=["m1"], source="mem")
    rows = lower_context_rows([ChatMessage(role="user", content="hi"), ctx])
    assert rows[0] == ChatMessage(role="user", content="hi")
    assert rows[1] == ChatMessage(role="user", content=context_row_text(ctx))
    assert "likes tea" in context_row_text(ctx)
    assert 'kind="memory"' in context_row_text(ctx)


async def test_deliver_context_items_appends_rows_once() -> None:
    async with MemoryStateStore() as store:
        sid = (await store.create_session()).id
        for key, text in (("b", "second"), ("a", "first")):
            await store.record_context_item(
                sid,
                StoredContextItem(
                    key=key, item=ContextItem(kind="instruction", content=text), at=AT
                ),
            )
        rows = await deliver_context_items(store, sid)
        assert [r.content for r in rows] == ["first", "second"]
        assert await store.get_messages(sid) == rows
        assert await deliver_context_items(store, sid) == []
        assert await store.get_message_count(sid) == 2


async def test_deliver_late_answer_notices_builds_notice_rows() -> None:
    async with MemoryStateStore() as store:
        sid = (await store.create_session()).id
        await store.record_late_answer(
            sid, LateAnswer(call_id="c1", tool_name="search", output={"hits": 3}, at=AT)
        )
        [row] = await deliver_late_answer_notices(store, sid)
        assert isinstance(row, ContextMessage)
        assert row.kind == "notice"
        assert "c1" in row.content and '"hits": 3' in row.content
        assert await store.list_undelivered_late_answers(sid) == []
