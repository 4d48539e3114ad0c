"""HND: the session handle, on any store and through the store's own ``session(id)``."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    SessionHandle,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
    session_handle,
)
from helix_agents.core.handles import user_sessions

from ._base import rule
from ._helpers import approval, assistant, commit, notice, user


class HandleRules:
    """HND-1, HND-2."""

    @rule("HND-1")
    async def test_HND_1_handle_calls_the_store(self, store: SessionStateStore) -> None:
        for bad in ("", 7, "x" * 513):
            with pytest.raises(ValidationError):
                session_handle(store, bad)  # type: ignore[arg-type]
        missing = session_handle(store, "no-such-session")
        assert missing.id == "no-such-session" and missing.store is store
        assert await missing.info() is None
        with pytest.raises(SessionNotFoundError):
            await missing.messages()
        with pytest.raises(SessionNotFoundError):
            await missing.append(user())

        info = await store.create_session(user_id="u-handles")
        handle = session_handle(store, info.id)
        assert await handle.info() == info
        result = await handle.append(
            user("a"), {"role": "assistant", "content": "b"}, expect_message_count=0
        )
        assert (result.first_index, result.message_count) == (0, 2)
        with pytest.raises(MessageCountConflictError):
            await handle.append(user("late"), expect_message_count=0)
        with pytest.raises(ValidationError):
            await handle.append({"role": "robot", "content": "x"})
        again = await handle.append(notice("n"), user("c"), commit_id="h-1")
        assert (await handle.append(notice("n"), user("c"), commit_id="h-1")).replayed
        rows = [user("a"), assistant("b"), notice("n"), user("c")]
        assert await handle.messages() == rows == await store.get_messages(info.id)
        assert await handle.messages(limit=2) == rows[2:]
        page = await handle.page(limit=3)
        assert list(page.messages) == rows[:3] and page.next_cursor is not None
        rest = await handle.page(limit=3, cursor=page.next_cursor)
        assert list(rest.messages) == rows[3:] and rest.next_cursor is None
        assert list((await handle.page(limit=2, order="desc")).messages) == rows[:1:-1]

        assert await handle.pop() == [user("c")]
        assert await store.get_message_count(info.id) == again.message_count - 1
        assert await handle.pop(2) == rows[1:3]
        assert not await handle.truncated()

        await handle.add_pending_approvals([approval("a2", 2), approval("a1", 1)])
        pending = await handle.pending_approvals()
        assert [a.approval_id for a in pending] == ["a1", "a2"]
        assert pending == await store.list_pending_approvals(info.id)
        assert await handle.resolve_approval("a1") == "resolved"
        assert await handle.resolve_approval("a1") == "already-resolved"
        listed = (await user_sessions(store, "u-handles")).sessions
        assert [(s.id, s.message_count, s.pending_approvals) for s in listed] == [(info.id, 1, 1)]
        assert listed == (await store.list_sessions("u-handles")).sessions

        await handle.clear()
        cleared = await handle.info()
        assert cleared is not None and cleared.message_count == 0
        assert await handle.messages() == [] and await handle.pending_approvals() == []
        await store.delete_session(info.id)
        assert await handle.info() is None

    @rule("HND-2", requires="handles")
    async def test_HND_2_store_session_and_sessions(self, store: SessionStateStore) -> None:
        own: Any = store
        first = await store.create_session(user_id="u-own")
        second = await store.create_session(user_id="u-own")
        await store.append_messages(first.id, commit(user("x")))
        await store.add_pending_approvals(second.id, [approval("a1")])
        handle = own.session(first.id)
        assert isinstance(handle, SessionHandle)
        assert handle.id == first.id
        assert await handle.messages() == [user("x")]
        with pytest.raises(ValidationError):
            own.session("")
        page = await own.sessions("u-own")
        assert page == await store.list_sessions("u-own")
        assert [(s.id, s.message_count, s.pending_approvals) for s in page.sessions] == [
            (second.id, 0, 1),
            (first.id, 1, 0),
        ]
        top = await own.sessions("u-own", 1)
        assert [s.id for s in top.sessions] == [second.id] and top.next_cursor is not None
        rest = await own.sessions("u-own", first=1, cursor=top.next_cursor)
        assert [s.id for s in rest.sessions] == [first.id] and rest.next_cursor is None
