"""MSG: rows round-trip, read the last N, page, truncate, retain, and stay unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    Message,
    SessionStateStore,
    ValidationError,
)

from ._base import StoreFactory, rule
from ._helpers import (
    CONTEXT,
    LATE,
    approval,
    assistant,
    checkpoint,
    commit,
    item,
    notice,
    snapshot,
    start,
    user,
)


def every_kind_of_row() -> list[Message]:
    """One row of every role and context kind, with every optional field in use."""
    return [
        ChatMessage(role="system", content="You are terse."),
        ChatMessage(role="user", content="Find flights ✈ to Zürich", id="m-1"),
        ChatMessage(
            role="user",
            content=[
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "x"}},
            ],
        ),
        ChatMessage.model_validate(
            {
                "role": "assistant",
                "content": None,
                "id": "m-2",
                "tool_calls": [
                    {
                        "id": "call-1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": 1}'},
                    }
                ],
                "refusal": None,
            }
        ),
        ChatMessage.model_validate(
            {"role": "tool", "content": "[]", "tool_call_id": "call-1", "name": "search"}
        ),
        ContextMessage(
            kind="instruction",
            content="Be brief.",
            source="policy",
            cursor="c1",
            metadata={"n": 1, "f": 1.5, "l": [None, True]},
            provider_options={"cache": {"ttl": 60}},
        ),
        ContextMessage.model_validate(
            {"role": "context", "kind": "notice", "content": "late", "pass": "p2"}
        ),
        ContextMessage(kind="memory", content="Likes window seats.", memory_ids=["mem-1", "mem-2"]),
        ContextMessage(
            kind="tools",
            content="Finish now.",
            enable=["answer"],
            disable=["search"],
            phase="forced_completion",
        ),
        ContextMessage(kind="tools", content="", enable=[]),
    ]


class MessageRules:
    """MSG-1..MSG-6."""

    @rule("MSG-1")
    async def test_MSG_1_rows_round_trip_exactly(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        rows = every_kind_of_row()
        await store.append_messages(sid, commit(*rows))
        assert await store.get_messages(sid) == rows
        page = await store.page_messages(sid, limit=500)
        assert list(page.messages) == rows
        got = await store.get_messages(sid)
        assert [type(r) for r in got] == [type(r) for r in rows]
        assert got[6].pass_ == "p2"  # type: ignore[union-attr]
        assert got[3].model_extra == rows[3].model_extra

    @rule("MSG-2")
    async def test_MSG_2_limit_returns_last_rows_in_order(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        rows = [user(str(i)) for i in range(7)]
        await store.append_messages(sid, commit(*rows[:4]))
        await store.append_messages(sid, commit(*rows[4:]))
        assert await store.get_messages(sid, limit=3) == rows[4:]
        assert await store.get_messages(sid, limit=1) == rows[6:]
        assert await store.get_messages(sid, limit=7) == rows
        assert await store.get_messages(sid, limit=100) == rows
        assert await store.get_messages(sid, limit=1_000_000) == rows
        assert await store.get_messages(sid, limit=2**62) == rows  # docs/limits.md: 0..2^62
        with pytest.raises(ValidationError):
            await store.get_messages(sid, limit=2**62 + 1)
        assert await store.get_messages(sid, limit=0) == []
        assert await store.get_messages(sid) == rows

    @rule("MSG-3")
    async def test_MSG_3_pages_walk_every_row_once(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        other = (await store.create_session()).id
        rows = [user(str(i)) for i in range(11)]
        # 50 rows to a page unless the caller says otherwise (the protocol's default).
        many = (await store.create_session()).id
        await store.append_messages(many, commit(*(user(str(i)) for i in range(51))))
        assert len((await store.page_messages(many)).messages) == 50
        await store.append_messages(sid, commit(*rows))
        await store.append_messages(other, commit(user()))
        for order, expected in (("asc", rows), ("desc", rows[::-1])):
            walked: list[Message] = []
            cursor = None
            while True:
                page = await store.page_messages(sid, limit=3, cursor=cursor, order=order)  # type: ignore[arg-type]
                walked += page.messages
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            assert walked == expected, order
        first = await store.page_messages(sid, limit=10)
        assert first.messages == tuple(rows[:10]) and first.next_cursor is not None
        await store.append_messages(sid, commit(user("late 1"), user("late 2")))
        rest = await store.page_messages(sid, limit=10, cursor=first.next_cursor)
        assert rest.messages == (rows[10], user("late 1"), user("late 2"))
        assert rest.next_cursor is None
        desc = await store.page_messages(sid, limit=2, order="desc")
        assert desc.messages == (user("late 2"), user("late 1"))
        before = await snapshot(store, sid)
        for bad_limit in (0, 501, -1):
            with pytest.raises(ValidationError):
                await store.page_messages(sid, limit=bad_limit)
        assert first.next_cursor is not None and desc.next_cursor is not None
        for bad_cursor, order in (
            ("not a cursor", "asc"),
            ("eyJ2IjoxfQ", "asc"),
            (desc.next_cursor, "asc"),
            (first.next_cursor, "desc"),
        ):
            with pytest.raises(ValidationError):
                await store.page_messages(sid, cursor=bad_cursor, order=order)  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            await store.page_messages(other, cursor=first.next_cursor)
        assert await snapshot(store, sid) == before

    @rule("MSG-4")
    async def test_MSG_4_truncate_bounds_and_effects(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        rows = [user("0"), assistant("1"), user("2")]
        await store.append_messages(sid, commit(*rows))
        await CONTEXT.record(store, sid, "k1")
        await LATE.record(store, sid, "call-1")
        await store.append_messages(
            sid,
            commit(
                notice("3"),
                notice("4"),
                **CONTEXT.deliver(("k1", 0)),
                **LATE.deliver(("call-1", 1)),
            ),
        )
        for cp, count in (("c2", 2), ("c3", 3), ("c5", 5)):
            await store.save_checkpoint(sid, checkpoint(cp, count))
        before = await snapshot(store, sid)
        for bad in (-1, 6):
            with pytest.raises(ValidationError):
                await store.truncate_messages(sid, bad)
            assert await snapshot(store, sid) == before
        await store.truncate_messages(sid, 5)
        assert await store.get_messages(sid) == before["messages"]
        await store.truncate_messages(sid, 3)
        assert await store.get_messages(sid) == rows
        assert await store.get_message_count(sid) == 3
        assert [c.checkpoint_id for c in await store.list_checkpoints(sid)] == ["c2", "c3"]
        assert await CONTEXT.keys(store, sid) == ["k1"]
        assert await LATE.keys(store, sid) == ["call-1"]
        result = await store.append_messages(sid, commit(user("new")))
        assert result.first_index == 3
        await store.truncate_messages(sid, 0)
        assert await store.get_messages(sid) == [] and await store.list_checkpoints(sid) == []
        assert await store.get_ui_message_count(sid) == 0

    @rule("MSG-5", requires="retention")
    async def test_MSG_5_retention_keeps_newest_rows(self, store_factory: StoreFactory) -> None:
        async with store_factory(max_messages=3) as store:
            sid = (await store.create_session()).id
            rows: list[Message] = [user(str(i)) for i in range(3)]
            rows += [notice("3"), user("4")]
            await store.append_messages(sid, commit(*rows[:3]))
            assert not await store.is_truncated(sid)
            result = await store.append_messages(sid, commit(*rows[3:]))
            assert (result.first_index, result.message_count) == (3, 5)
            assert await store.is_truncated(sid)
            assert await store.get_messages(sid) == rows[2:]
            assert await store.get_messages(sid, limit=2) == rows[3:]
            assert await store.get_message_count(sid) == 5
            assert await store.get_ui_message_count(sid) == 4
            page = await store.page_messages(sid, limit=500)
            assert list(page.messages) == rows[2:]
            desc = await store.page_messages(sid, limit=2, order="desc")
            assert desc.messages == (rows[4], rows[3])
            rest = await store.page_messages(sid, limit=2, order="desc", cursor=desc.next_cursor)
            assert rest.messages == (rows[2],) and rest.next_cursor is None
            # Rows retention dropped cannot be cut into: truncate, rewind and clone refuse.
            before = await snapshot(store, sid)
            with pytest.raises(ValidationError):
                await store.truncate_messages(sid, 1)
            with pytest.raises(ValidationError):
                await store.append_messages(sid, commit(user(), start_run=start("r1", 1)))
            with pytest.raises(ValidationError):
                await store.clone_session(sid, "clone-below", up_to=1)
            assert await snapshot(store, sid) == before
            assert await store.get_session("clone-below") is None
            # A clone from the retained rows on keeps their absolute indexes.
            inside = await store.clone_session(sid, "clone-inside", up_to=4)
            assert inside.message_count == 4
            assert await store.get_messages("clone-inside") == rows[2:4]
            later = await store.append_messages(sid, commit(user("5"), expect_message_count=5))
            assert later.first_index == 5
            assert (await store.get_session(sid)).message_count == 6  # type: ignore[union-attr]
        # Any N from 1 up: one row kept at N=1, one dropped at N=4, none under a large N.
        for keep, kept in ((1, rows[4:]), (4, rows[1:]), (10_000, rows)):
            async with store_factory(max_messages=keep) as store:
                sid = (await store.create_session()).id
                await store.append_messages(sid, commit(*rows))
                assert await store.get_messages(sid) == kept, keep
                assert await store.is_truncated(sid) == (len(kept) < len(rows)), keep

    @rule("MSG-6")
    async def test_MSG_6_stored_rows_cannot_be_changed_by_callers(
        self, store: SessionStateStore
    ) -> None:
        sid = (await store.create_session(metadata={"tags": ["a"]})).id
        parts = [{"type": "text", "text": "original"}]
        row = ChatMessage(role="user", content=parts)
        await store.append_messages(sid, commit(row))
        stored_item = item("k1")
        await store.record_context_item(sid, stored_item)
        await store.add_pending_approvals(sid, [approval("a1")])
        await store.save_checkpoint(sid, checkpoint("c1", 1, state={"list": [1]}))
        before = await snapshot(store, sid)
        parts[0]["text"] = "changed by the caller"
        parts.append({"type": "text", "text": "appended"})
        got = await store.get_messages(sid)
        got[0].content.append({"type": "text", "text": "x"})  # type: ignore[union-attr]
        info: Any = await store.get_session(sid)
        info.metadata["tags"].append("b")
        checkpoints: Any = await store.list_checkpoints(sid)
        checkpoints[0].state["list"].append(2)
        approvals: Any = await store.list_pending_approvals(sid)
        approvals[0].input["path"] = "/"
        assert await snapshot(store, sid) == before
        assert (await store.get_messages(sid))[0].content == [{"type": "text", "text": "original"}]
