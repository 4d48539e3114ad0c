"""MSG-3, SES-6, SES-7 on the edges of paging: writes between pages, exact sizes, ties."""

from __future__ import annotations

from typing import Literal

import pytest

from helix_agents.core import Message, SessionStateStore, ValidationError

from ._base import StoreFactory, rule
from ._helpers import FrozenClock, commit, user


async def _page(
    store: SessionStateStore,
    sid: str,
    limit: int,
    cursor: str | None,
    order: Literal["asc", "desc"],
) -> tuple[list[str], str | None]:
    page = await store.page_messages(sid, limit=limit, cursor=cursor, order=order)
    return [str(row.content) for row in page.messages], page.next_cursor


async def _walk_sessions(store: SessionStateStore, user_id: str, first: int) -> list[list[str]]:
    """The user's listing page by page, ``first`` at a time."""
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = await store.list_sessions(user_id, first=first, cursor=cursor)
        pages.append([s.id for s in page.sessions])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


class PagingRules:
    """Pages of rows and of sessions, walked while the data moves under them."""

    @rule("MSG-3")
    async def test_MSG_3_pages_are_exact_while_rows_are_appended(
        self, store: SessionStateStore
    ) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(*(user(str(i)) for i in range(7))))
        # asc: rows appended between pages show up on the later pages, none twice.
        rows, cursor = await _page(store, sid, 3, None, "asc")
        assert rows == ["0", "1", "2"] and cursor is not None
        await store.append_messages(sid, commit(user("7"), user("8")))
        rows, cursor = await _page(store, sid, 3, cursor, "asc")
        assert rows == ["3", "4", "5"] and cursor is not None
        await store.append_messages(sid, commit(user("9")))
        rows, cursor = await _page(store, sid, 3, cursor, "asc")
        assert rows == ["6", "7", "8"] and cursor is not None
        rows, cursor = await _page(store, sid, 3, cursor, "asc")
        assert (rows, cursor) == (["9"], None)
        # desc: the walk goes back from the newest row it started at; later rows stay out.
        rows, cursor = await _page(store, sid, 4, None, "desc")
        assert rows == ["9", "8", "7", "6"] and cursor is not None
        await store.append_messages(sid, commit(user("10"), user("11")))
        rows, cursor = await _page(store, sid, 4, cursor, "desc")
        assert rows == ["5", "4", "3", "2"] and cursor is not None
        await store.append_messages(sid, commit(user("12")))
        rows, cursor = await _page(store, sid, 4, cursor, "desc")
        assert (rows, cursor) == (["1", "0"], None)
        # A page that ends on the last row is the last page, in both orders.
        for order in ("asc", "desc"):
            rows, cursor = await _page(store, sid, 13, None, order)
            assert len(rows) == 13 and cursor is None, order
            rows, cursor = await _page(store, sid, 12, None, order)
            assert len(rows) == 12 and cursor is not None, order
            rows, cursor = await _page(store, sid, 1, cursor, order)
            assert rows == (["12"] if order == "asc" else ["0"]) and cursor is None, order

    @rule("MSG-3")
    async def test_MSG_3_every_page_size_walks_exactly(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        total = 11
        rows: list[Message] = [user(str(i)) for i in range(total)]
        await store.append_messages(sid, commit(*rows))
        for limit in (1, 2, 5, 10, 11, 12):
            for order in ("asc", "desc"):
                sizes: list[int] = []
                walked: list[str] = []
                cursor = None
                while True:
                    got, cursor = await _page(store, sid, limit, cursor, order)
                    sizes.append(len(got))
                    walked += got
                    if cursor is None:
                        break
                full, rest = divmod(total, limit)
                assert sizes == [limit] * full + ([rest] if rest else []), (limit, order)
                names = [str(i) for i in range(total)]
                assert walked == (names if order == "asc" else names[::-1]), (limit, order)

    @rule("SES-6")
    async def test_SES_6_user_ids_that_prefix_each_other(self, store: SessionStateStore) -> None:
        users = ["u", "u1", "u10", "u1:", "u_", "U1"]
        owned: dict[str, list[str]] = {u: [] for u in users}
        for n in range(12):
            owner = users[n % len(users)]
            owned[owner].append((await store.create_session(f"p{n}", user_id=owner)).id)
        for owner in users:
            for first in (1, 500):
                pages = await _walk_sessions(store, owner, first)
                assert sorted(s for p in pages for s in p) == sorted(owned[owner]), (owner, first)
        # 20 to a page unless the caller says otherwise (the protocol's default).
        for n in range(21):
            await store.create_session(f"many-{n}", user_id="many")
        default = await store.list_sessions("many")
        assert len(default.sessions) == 20 and default.next_cursor is not None
        cursor = (await store.list_sessions("u1", first=1)).next_cursor
        assert cursor is not None
        for other in ("u10", "u", "u1:"):
            with pytest.raises(ValidationError):
                await store.list_sessions(other, cursor=cursor)

    @rule("SES-6", requires="clock")
    async def test_SES_6_ties_by_id_and_cursors_across_ties(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        ids = ["s3", "s10", "s1", "s7", "s0", "s12", "s5", "s11", "s2"]
        async with store_factory(clock=clock) as store:
            for sid in ids:
                await store.create_session(sid, user_id="u")
            clock.advance(60)
            for sid in ("s7", "s1"):  # the same later instant for both
                await store.append_messages(sid, commit(user()))
            whole = await store.list_sessions("u", first=500)
            expected = ["s1", "s7", *sorted(set(ids) - {"s1", "s7"})]
            assert [s.id for s in whole.sessions] == expected
            times = [s.last_activity_at for s in whole.sessions]
            assert times[0] == times[1] > times[2] == times[-1]
            for first in (1, 2, 3, 4, 9):
                pages = await _walk_sessions(store, "u", first)
                assert [s for p in pages for s in p] == expected, first
                sizes = [len(p) for p in pages]
                full, rest = divmod(len(ids), first)
                assert sizes == [first] * full + ([rest] if rest else []), first
            # One microsecond later is later: activity is ordered to the microsecond.
            clock.advance(0.000001)
            await store.append_messages("s12", commit(user()))
            newest = await store.list_sessions("u", first=3)
            assert [s.id for s in newest.sessions] == ["s12", "s1", "s7"]

    @rule("SES-7", requires="clock")
    async def test_SES_7_activity_moves_forward_on_a_clock_that_stands_still(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        async with store_factory(clock=clock) as store:
            info = await store.create_session("still")
            assert info.created_at == clock.now
            seen = [info.last_activity_at]
            for write in range(3):
                await store.append_messages("still", commit(user(str(write))))
                current = await store.get_session("still")
                assert current is not None
                seen.append(current.last_activity_at)
            assert seen == sorted(set(seen)), seen
