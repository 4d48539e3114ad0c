"""CKP-3..CKP-6: checkpoints read a page at a time, and deleted one by one."""

from __future__ import annotations

import asyncio

import pytest

from helix_agents.core import SessionNotFoundError, SessionStateStore, ValidationError
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

from ._base import StoreFactory, rule
from ._helpers import checkpoint, commit, snapshot, user

# Ids that sort differently by code point than by any locale: upper case before lower,
# a unit separator, accents, an astral character, and one id a prefix of others.
_IDS = ("a", "a\x1fz", "a\x1f", "ab", "aé", "a\U0001f600", "B", "b", "é")


async def _page_ids(store: SessionStateStore, sid: str, **page: object) -> list[str]:
    return [c.checkpoint_id for c in await store.page_checkpoints(sid, **page)]  # type: ignore[arg-type]


class CheckpointPageRules:
    """CKP-3..CKP-6."""

    @rule("CKP-3")
    async def test_CKP_3_page_by_prefix_before_limit(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user(), user()))
        for n, cid in enumerate(_IDS):
            # Every message_count and creation time: the page orders by id alone.
            await store.save_checkpoint(sid, checkpoint(cid, n % 3, seconds=-n))
        everything = sorted(_IDS, reverse=True)
        assert await _page_ids(store, sid) == everything
        assert await _page_ids(store, sid, prefix="a") == [i for i in everything if i[0] == "a"]
        assert await _page_ids(store, sid, prefix="a\x1f") == ["a\x1fz", "a\x1f"]
        assert await _page_ids(store, sid, prefix="a", before="aé") == [
            "ab",
            "a\x1fz",
            "a\x1f",
            "a",
        ]
        assert await _page_ids(store, sid, before="b", limit=2) == ["a\U0001f600", "aé"]
        assert await _page_ids(store, sid, prefix="zz") == []
        # 50 to a page unless the caller says otherwise (the protocol's default).
        many = (await store.create_session()).id
        for n in range(51):
            await store.save_checkpoint(many, checkpoint(f"c{n:02}", 0))
        assert len(await _page_ids(store, many)) == 50
        assert await _page_ids(store, sid, before="B") == []
        # Walking pages with ``before`` = the last id visits every checkpoint once.
        walked: list[str] = []
        before: str | None = None
        while page := await _page_ids(store, sid, before=before, limit=2):
            walked += page
            before = page[-1]
        assert walked == everything
        # A checkpoint saved after a page shows up on the next one, once.
        await store.save_checkpoint(sid, checkpoint("a\x1f0", 0))
        await store.save_checkpoint(sid, checkpoint("a\x1f0", 1))  # a repeat: not recorded
        assert await _page_ids(store, sid, prefix="a\x1f") == ["a\x1fz", "a\x1f0", "a\x1f"]
        assert (await store.page_checkpoints(sid, prefix="B"))[0] == checkpoint(
            "B", _IDS.index("B") % 3, seconds=-_IDS.index("B")
        )
        await store.truncate_messages(sid, 1)
        survivors = [cid for n, cid in enumerate(_IDS) if n % 3 <= 1] + ["a\x1f0"]
        assert await _page_ids(store, sid) == sorted(survivors, reverse=True)
        await store.clear_session(sid)
        assert await _page_ids(store, sid) == []
        with pytest.raises(SessionNotFoundError):
            await store.page_checkpoints("missing")

    @rule("CKP-4")
    async def test_CKP_4_bad_page_refused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.save_checkpoint(sid, checkpoint("c1", 0))
        before = await snapshot(store, sid)
        bad: list[dict[str, object]] = [
            {"limit": 0},
            {"limit": MAX_CHECKPOINT_PAGE + 1},
            {"limit": True},
            {"prefix": 7},
            {"prefix": "x" * 513},
            {"before": ""},
            {"before": "\ud800"},
        ]
        for page in bad:
            with pytest.raises(ValidationError) as caught:
                await store.page_checkpoints(sid, **page)  # type: ignore[arg-type]
            assert caught.value.code == "validation_error"
            assert caught.value.session_id == sid
        assert await snapshot(store, sid) == before
        assert await _page_ids(store, sid, limit=MAX_CHECKPOINT_PAGE) == ["c1"]

    @rule("CKP-5")
    async def test_CKP_5_delete_named_checkpoints(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(sid, commit(user()))
        for cid in ("c1", "c2", "c3", "c4"):
            await store.save_checkpoint(sid, checkpoint(cid, 1))
        untouched = await snapshot(store, sid)
        assert await store.delete_checkpoints(sid, []) == 0
        assert await store.delete_checkpoints(sid, ["nope"]) == 0
        assert await snapshot(store, sid) == untouched
        for bad in (["c1", ""], ["c1"] * (MAX_CHECKPOINT_PAGE + 1), "c1", [7]):
            with pytest.raises(ValidationError):
                await store.delete_checkpoints(sid, bad)  # type: ignore[arg-type]
        assert await snapshot(store, sid) == untouched
        assert await store.delete_checkpoints(sid, ["c2", "nope", "c4", "c2"]) == 2
        assert [c.checkpoint_id for c in await store.list_checkpoints(sid)] == ["c1", "c3"]
        assert await store.get_checkpoint(sid, "c2") is None
        assert await _page_ids(store, sid) == ["c3", "c1"]
        info = await store.get_session(sid)
        assert info is not None
        assert untouched["info"] is not None
        assert info.last_activity_at > untouched["info"].last_activity_at
        # A deleted id is forgotten: saving it again lands.
        assert (await store.save_checkpoint(sid, checkpoint("c2", 0, state="again"))).recorded
        assert await store.get_checkpoint(sid, "c2") == checkpoint("c2", 0, state="again")
        assert await _page_ids(store, sid) == ["c3", "c2", "c1"]
        with pytest.raises(SessionNotFoundError):
            await store.delete_checkpoints("missing", ["c1"])

    @rule("CKP-6", requires="shared_instances")
    async def test_CKP_6_racing_deletes_count_once(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = (await a.create_session()).id
            ids = [f"c{i}" for i in range(6)]
            for cid in ids:
                await a.save_checkpoint(sid, checkpoint(cid, 0))
            counts = await asyncio.gather(*(s.delete_checkpoints(sid, ids) for s in (a, b) * 3))
            assert sum(counts) == len(ids)
            assert await b.page_checkpoints(sid) == []
