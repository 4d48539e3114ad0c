"""LST-1..LST-5: the store-wide listing (docs/listing.md), by session id, with filters."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest

from helix_agents.core import SessionStateStore, StoreUnavailableError, ValidationError

from ._base import StoreFactory, rule
from ._helpers import FrozenClock, approval, commit, user
from ._hostile import forged_cursor


async def _walk(store: SessionStateStore, first: int = 20, **filters: Any) -> list[list[str]]:
    """The store-wide listing page by page."""
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = await store.list_all_sessions(first=first, cursor=cursor, **filters)
        pages.append([s.id for s in page.sessions])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


async def _ids(store: SessionStateStore, **filters: Any) -> list[str]:
    return [sid for page in await _walk(store, 500, **filters) for sid in page]


def _sizes(first: int, total: int) -> list[int]:
    full, rest = divmod(total, first)
    return [first] * full + ([rest] if rest else []) or [0]


# Ids that sort differently by bytes, by locale and by length: the order is code points.
_IDS = ["b", "a", "a0", "a-", "A", "é", "z", "ab", "中", "aé", "😀", "~", "0", "{x}", "a b"]


class ListingRules:
    """Every session of the store, by id: pages, cursors, filters, errors, deletes."""

    @rule("LST-1")
    async def test_LST_1_pages_cover_every_session_once_in_id_order(
        self, store: SessionStateStore
    ) -> None:
        empty = await store.list_all_sessions()
        assert (empty.sessions, empty.next_cursor) == ((), None)
        ids = [*_IDS, *(f"n{n:02d}" for n in range(8))]
        owners = [None, "u1", "u2"]
        for n, sid in enumerate(ids):
            metadata: dict[str, Any] = {"n": n, "tags": [n]}
            await store.create_session(sid, user_id=owners[n % 3], metadata=metadata)
        await store.append_messages("b", commit(user(), user()))
        await store.add_pending_approvals("a", [approval("ap1")])
        expected = sorted(ids)
        for first in (1, 2, 3, 7, len(ids), 500):
            pages = await _walk(store, first)
            assert [s for p in pages for s in p] == expected, first
            assert [len(p) for p in pages] == _sizes(first, len(ids)), first
        default = await store.list_all_sessions()
        assert len(default.sessions) == 20 and default.next_cursor is not None
        # Each entry is the session as get_session reads it, with its owner and metadata.
        for listed in (await store.list_all_sessions(first=500)).sessions:
            info = await store.get_session(listed.id)
            assert info is not None
            assert (listed.user_id, listed.metadata) == (info.user_id, info.metadata)
            assert (listed.created_at, listed.last_activity_at, listed.message_count) == (
                info.created_at,
                info.last_activity_at,
                info.message_count,
            )
            assert listed.pending_approvals == (1 if listed.id == "a" else 0)
            tags = listed.metadata["tags"]
            assert isinstance(tags, list)
            tags.append("changed")  # a copy: the stored metadata stays
        assert (await store.list_all_sessions(first=1)).sessions[0].metadata["tags"] == [12]

    @rule("LST-2", requires="shared_instances")
    async def test_LST_2_a_walk_survives_creates_and_deletes(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as a, store_factory() as b:
            stable = [f"m{n:02d}" for n in range(0, 40, 2)]
            for sid in stable:
                await a.create_session(sid)
            # Between pages another instance creates sessions behind and ahead of the
            # cursor and deletes some: nothing repeats, every page but the last is full.
            writes = {
                1: (["m01", "m05", "m39"], ["m10"]),  # after the page ending at m04
                3: (["m03", "m21"], ["m24", "m02"]),
            }
            pages: list[list[str]] = []
            cursor = None
            while True:
                page = await a.list_all_sessions(first=3, cursor=cursor)
                pages.append([s.id for s in page.sessions])
                created, deleted = writes.get(len(pages), ([], []))
                for sid in created:
                    await b.create_session(sid)
                for sid in deleted:
                    assert await b.delete_session(sid)
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            seen = [s for p in pages for s in p]
            assert seen == sorted(set(seen)), seen
            assert all(len(p) == 3 for p in pages[:-1]), pages
            assert set(stable) - {"m10", "m24", "m02"} <= set(seen)
            assert {"m05", "m21", "m39"} <= set(seen)  # created ahead of the cursor
            assert not {"m01", "m03", "m10", "m24"} & set(seen)  # behind it, or gone first
            # Racing: a walk while the other instance keeps creating and deleting.
            survivors = set(await _ids(a))

            async def churn() -> None:
                for n in range(30):
                    await b.create_session(f"r{n:02d}")
                    if n % 2:
                        await b.delete_session(f"r{n - 1:02d}")

            walked, _ = await asyncio.gather(_walk(a, 2), churn())
            seen = [s for p in walked for s in p]
            assert seen == sorted(set(seen)), seen
            assert survivors <= set(seen)

    @rule("LST-3", requires="clock")
    async def test_LST_3_filters_by_owner_activity_and_metadata(
        self, store_factory: StoreFactory
    ) -> None:
        clock = FrozenClock()
        metadata: list[Mapping[str, Any]] = [
            {"team": "red", "n": 1},
            {"team": "blue", "n": 1.0},
            {"team": "red", "n": True},
            {"team": "red", "tags": ["a", {"b": None}]},
            {},
            {"team": None},
            {"team": "red", "n": 1, "x": {"y": [1, 2]}},
            {"n": "1"},
        ]
        async with store_factory(clock=clock) as store:
            for n, md in enumerate(metadata):
                owner = None if n == 4 else ("u1" if n % 2 == 0 else "u2")
                await store.create_session(f"f{n}", user_id=owner, metadata=dict(md))
            clock.advance(60)
            for sid in ("f3", "f6"):
                await store.append_messages(sid, commit(user()))
            later = clock.now
            assert await _ids(store) == [f"f{n}" for n in range(8)]
            assert await _ids(store, user_id="u1") == ["f0", "f2", "f6"]
            assert await _ids(store, user_id="u2") == ["f1", "f3", "f5", "f7"]
            assert await _ids(store, user_id="nobody") == []
            assert await _ids(store, active_since=later) == ["f3", "f6"]
            assert await _ids(store, active_since=later + timedelta(microseconds=1)) == []
            assert len(await _ids(store, active_since=later - timedelta(seconds=61))) == 8
            assert await _ids(store, metadata={"team": "red"}) == ["f0", "f2", "f3", "f6"]
            # JSON equality: 1, 1.0, true and "1" are four values; null is a value.
            assert await _ids(store, metadata={"n": 1}) == ["f0", "f6"]
            assert await _ids(store, metadata={"n": 1.0}) == ["f1"]
            assert await _ids(store, metadata={"n": True}) == ["f2"]
            assert await _ids(store, metadata={"n": "1"}) == ["f7"]
            assert await _ids(store, metadata={"team": None}) == ["f5"]
            assert await _ids(store, metadata={"tags": ["a", {"b": None}]}) == ["f3"]
            assert await _ids(store, metadata={"tags": ["a"]}) == []
            assert await _ids(store, metadata={"x": {"y": [1, 2]}, "n": 1}) == ["f6"]
            assert await _ids(store, metadata={}) == [f"f{n}" for n in range(8)]
            both = {"user_id": "u1", "active_since": later, "metadata": {"team": "red"}}
            assert await _ids(store, **both) == ["f6"]
            # A filtered walk pages through the matches alone, each once.
            pages = await _walk(store, 1, metadata={"team": "red"})
            assert pages == [["f0"], ["f2"], ["f3"], ["f6"]]

    @rule("LST-4")
    async def test_LST_4_bad_arguments_and_cursors_are_validation_errors(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as store:
            for n in range(4):
                await store.create_session(f"v{n}", user_id="u1")
            theirs = (await store.list_sessions("u1", first=1)).next_cursor
            mine = (await store.list_all_sessions(first=1)).next_cursor
            by_u1 = (await store.list_all_sessions(first=1, user_id="u1")).next_cursor
            assert theirs and mine and by_u1
            naive = datetime(2026, 1, 1)
            bad: list[dict[str, Any]] = [
                *({"first": v} for v in (0, 501, True, 1.5, "3", None)),
                *({"user_id": v} for v in ("", 5, "a\x00b", "x" * 513)),
                *({"active_since": v} for v in (naive, "2026-01-01", 5)),
                *({"metadata": v} for v in (5, "x", [1], {1: 2}, {"x": float("nan")})),
                *({"cursor": v} for v in ("x", 5, "", theirs)),
                {"cursor": forged_cursor({"v": 1, "k": "all", "f": "x", "id": "v1"})},
                {"cursor": by_u1},  # another filter set's
                {"cursor": by_u1, "user_id": "u2"},
                {"cursor": mine, "metadata": {"a": 1}},
            ]
            wrong: list[str] = []
            for kwargs in bad:
                try:
                    await store.list_all_sessions(**kwargs)
                except ValidationError as exc:
                    if exc.code != "validation_error" or exc.retryable:
                        wrong.append(f"{kwargs!r:.60}: {exc.code} retryable={exc.retryable}")
                except BaseException as exc:
                    wrong.append(f"{kwargs!r:.60}: {type(exc).__name__}: {exc!s:.60}")
                else:
                    wrong.append(f"{kwargs!r:.60}: accepted")
            assert wrong == [], "\n".join(wrong)
            with pytest.raises(ValidationError):
                await store.list_sessions("u1", cursor=mine)
            # The right filters take their cursor on.
            page = await store.list_all_sessions(first=1, cursor=by_u1, user_id="u1")
            assert [s.id for s in page.sessions] == ["v1"]
        # Closed before bad argument: a closed store says so first.
        with pytest.raises(StoreUnavailableError):
            await store.list_all_sessions(first=0, cursor="x")

    @rule("LST-5")
    async def test_LST_5_deleted_sessions_are_absent(self, store: SessionStateStore) -> None:
        for n in range(6):
            await store.create_session(f"d{n}", user_id="u1", metadata={"k": n})
        await store.append_messages("d1", commit(user(), user()))
        for sid in ("d2", "d4"):
            assert await store.delete_session(sid)
        assert await _ids(store) == ["d0", "d1", "d3", "d5"]
        assert await _ids(store, user_id="u1", metadata={"k": 2}) == []
        # Re-created under the same id: listed once, as the new session.
        await store.create_session("d4", user_id="u2", metadata={"k": "new"})
        await store.clear_session("d1")
        clone = await store.clone_session("d3", "d3-copy")
        listed = {s.id: s for s in (await store.list_all_sessions(first=500)).sessions}
        assert list(listed) == ["d0", "d1", "d3", "d3-copy", "d4", "d5"]
        assert (listed["d4"].user_id, listed["d4"].metadata) == ("u2", {"k": "new"})
        assert listed["d1"].message_count == 0
        assert listed["d3-copy"].created_at == clone.created_at
        for sid in list(listed):
            await store.delete_session(sid)
        assert await _walk(store, 1) == [[]]
