"""Scoped state's journal on standalone Redis and on the three-node cluster (docs/scoped-state.md).

A crash between the commit and the roll-forward is made by a store whose roll-forward
does nothing; everything else is the real server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest

from helix_agents.core import ChatMessage, MessageCommit, ScopedStateDelta
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis._codec import text
from helix_agents.store_redis._keys import SESSION_KEYS

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["standalone", "cluster"])
def factory(
    request: pytest.FixtureRequest,
    standalone_factory: Callable[..., RedisStateStore],
    cluster_factory: Callable[..., RedisStateStore],
) -> Callable[..., RedisStateStore]:
    return standalone_factory if request.param == "standalone" else cluster_factory


def with_user_delta(owner: str, **changes: Any) -> MessageCommit:
    """A one-row commit setting ``changes`` in the user map ``owner``."""
    delta = ScopedStateDelta(scope="user", owner=owner, changes=changes)
    return MessageCommit(messages=(ChatMessage(role="user", content="x"),), scoped_state=(delta,))


async def _crashes(session_id: str, tokens: Mapping[str, str]) -> None:
    """A roll-forward that never happens: the process died right after the commit."""


async def crashed_commit(store: RedisStateStore, owner: str, **changes: Any) -> str:
    """A new session of ``store`` whose commit of ``changes`` to the user map ``owner``
    landed, and whose roll-forward (this one and every later one) never happens."""
    store.engine.journal.settle = _crashes  # type: ignore[method-assign]
    sid = (await store.create_session()).id
    await store.append_messages(sid, with_user_delta(owner, **changes))
    return sid


async def test_a_crash_after_the_commit_is_repaired_by_the_next_reader_once(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as crashing, factory() as reader:
        sid = await crashed_commit(crashing, "ada", a=1, big=10**30)
        client = reader.client
        map_key, writers, _, marks, retired = reader.options.keys.scoped("user", "ada")
        journal = reader.options.keys.session(sid, ("scsj",))[0]
        # Landed with its rows, not yet in the map: the journal and the writers entry hold it.
        assert await client.hlen(map_key) == 0
        assert await client.hlen(journal) == 1
        assert await client.hexists(writers, sid)
        assert await client.zscore(retired, sid) is None
        [seq] = [int(field) for field in text(await client.hkeys(journal))]
        assert await reader.get_scoped_state("user", "ada") == {"a": 1, "big": 10**30}
        assert await client.hlen(journal) == 0
        assert not await client.hexists(writers, sid)
        # Settled, so retired; its mark outlives it by the retention (a day).
        assert await client.zscore(retired, sid) is not None
        assert int(text(await client.hget(marks, sid))) == seq
        # A later delta wins; replaying the old entry (a second roll-forward) changes nothing.
        await reader.append_messages(sid, with_user_delta("ada", a=2))
        scripts = reader.engine.scripts
        assert scripts is not None
        pairs = ["a", json.dumps(1)]
        assert await scripts.run("scs_apply", [map_key, marks], [sid, seq, *pairs]) == 0
        assert await reader.get_scoped_state("user", "ada") == {"a": 2, "big": 10**30}


async def test_a_delete_applies_the_journal_first(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as crashing, factory() as other:
        sid = await crashed_commit(crashing, "bob", kept=True)
        assert await other.delete_session(sid)
        assert await other.get_scoped_state("user", "bob") == {"kept": True}


async def test_a_commit_sealed_by_a_reader_announces_again_and_lands(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as writer, factory() as reader:
        sid = (await writer.create_session()).id
        announce = writer.engine.journal.announce
        rounds: list[dict[str, str]] = []

        async def announce_then_a_reader_seals(session_id: str, maps: Any) -> dict[str, str]:
            tokens = await announce(session_id, maps)
            rounds.append(tokens)
            if len(rounds) == 1:
                # The reader settles the writer (nothing pending yet), seals, and drops it.
                assert await reader.get_scoped_state("user", "cy") == {}
            return tokens

        writer.engine.journal.announce = announce_then_a_reader_seals  # type: ignore[method-assign]
        result = await writer.append_messages(sid, with_user_delta("cy", n=1))
        assert result.message_count == 1 and len(rounds) == 2
        assert await reader.get_scoped_state("user", "cy") == {"n": 1}
        _, writers, _, _, _ = reader.options.keys.scoped("user", "cy")
        assert await reader.client.hlen(writers) == 0


async def _expired(store: RedisStateStore, session_id: str) -> None:
    """Stay idle past the store's 0.3 s idle TTL: the session is gone."""
    await anyio.sleep(0.4)
    assert not await store.client.exists(store.options.keys.meta(session_id))


async def _session_ttls(store: RedisStateStore, session_id: str) -> dict[str, int]:
    """PTTL of each of the session's keys (-2 = gone, -1 = no expiry)."""
    keys = store.options.keys.session(session_id)
    return {
        name: await store.client.pttl(key) for name, key in zip(SESSION_KEYS, keys, strict=True)
    }


async def test_a_crash_then_idle_expiry_keeps_the_deltas_for_the_next_reader(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory(idle_ttl=0.3) as crashing, factory() as reader, factory() as other:
        sid = await crashed_commit(crashing, "dee", a=1, b=[1])
        journal = crashing.options.keys.session(sid, ("scsj",))[0]
        [seq] = [int(field) for field in text(await crashing.client.hkeys(journal))]
        ttls = await _session_ttls(crashing, sid)
        # The journal holds a landed delta: it alone has no deadline.
        assert ttls.pop("scsj") == -1 and all(t > 0 or t == -2 for t in ttls.values()), ttls
        await _expired(crashing, sid)
        assert await crashing.get_session(sid) is None
        assert await reader.get_scoped_state("user", "dee") == {"a": 1, "b": [1]}
        assert set((await _session_ttls(reader, sid)).values()) == {-2}  # nothing left
        _, writers, _, marks, _ = reader.options.keys.scoped("user", "dee")
        assert not await reader.client.hexists(writers, sid)
        assert int(text(await reader.client.hget(marks, sid))) == seq
        # Applied once: a later delta is not undone by a second read.
        later = (await other.create_session()).id
        await other.append_messages(later, with_user_delta("dee", a=2))
        assert await reader.get_scoped_state("user", "dee") == {"a": 2, "b": [1]}


async def test_the_id_of_a_session_expired_with_deltas_pending_can_be_used_again(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory(idle_ttl=0.3) as crashing, factory() as store:
        sid = await crashed_commit(crashing, "eve", old=1, both=1)
        await _expired(crashing, sid)
        # The new session under that id inherits no rows, and its entries follow the old.
        await store.create_session(sid)
        assert await store.get_message_count(sid) == 0
        await store.append_messages(sid, with_user_delta("eve", new=2, both=2))
        assert await store.get_scoped_state("user", "eve") == {"old": 1, "new": 2, "both": 2}
        journal = store.options.keys.session(sid, ("scsj",))[0]
        assert not await store.client.exists(journal)


async def test_without_a_crash_an_expired_or_deleted_session_leaves_no_key(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory(idle_ttl=0.3) as store:
        expiring, deleted = (await store.create_session()).id, (await store.create_session()).id
        for sid in (expiring, deleted):
            own = ScopedStateDelta(scope="session", changes={"s": 1})
            app = ScopedStateDelta(scope="app", owner="fin", changes={"a": 1})
            await store.append_messages(sid, MessageCommit(scoped_state=(own, app)))
            # The commit's own settle sealed the app map: the seal expires with the session.
            assert all(t > 0 or t == -2 for t in (await _session_ttls(store, sid)).values())
        assert await store.delete_session(deleted)
        assert set((await _session_ttls(store, deleted)).values()) == {-2}
        await _expired(store, expiring)
        assert set((await _session_ttls(store, expiring)).values()) == {-2}
        assert await store.get_scoped_state("app", "fin") == {"a": 1}


@pytest.mark.parametrize("end", ["deleted", "expired"])
async def test_a_session_created_again_under_an_old_id_lands_its_deltas(
    factory: Callable[..., RedisStateStore], end: str
) -> None:
    async with factory(idle_ttl=0.3) as store:
        sid = (await store.create_session()).id
        await store.append_messages(sid, with_user_delta("fay", a=1))
        if end == "deleted":
            assert await store.delete_session(sid)
        else:
            await _expired(store, sid)
        # The old session's mark stays in the map's slot; the new one's entries rise above it.
        await store.create_session(sid)
        await store.append_messages(sid, with_user_delta("fay", a=2))
        assert await store.get_scoped_state("user", "fay") == {"a": 2}


async def test_entries_numbered_from_one_by_earlier_versions_apply_in_order_once(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as crashing, factory() as store:
        sid = await crashed_commit(crashing, "gus", a=1, b=1)
        await crashing.append_messages(sid, with_user_delta("gus", b=2))
        client = store.client
        journal, pending = store.options.keys.session(sid, ("scsj", "scsp"))
        map_key, _, _, marks, _ = store.options.keys.scoped("user", "gus")
        # Renumber the two pending entries 1 and 2, as versions before the server's time did.
        fields = sorted(await client.hkeys(journal), key=int)
        entries = [text(await client.hget(journal, field)) for field in fields]
        await client.delete(journal)
        await client.hset(journal, mapping={"1": entries[0], "2": entries[1]})
        await client.hset(pending, map_key, 2)
        await client.hset(store.options.keys.meta(sid), "scsn", 2)
        await store.append_messages(sid, with_user_delta("gus", a=3))
        assert await store.get_scoped_state("user", "gus") == {"a": 3, "b": 2}
        assert not await client.exists(journal)
        assert int(text(await client.hget(marks, sid))) > 2
        scripts = store.engine.scripts
        assert scripts is not None
        assert await scripts.run("scs_apply", [map_key, marks], [sid, 2, "b", "1"]) == 0
        assert await store.get_scoped_state("user", "gus") == {"a": 3, "b": 2}


async def test_marks_go_once_their_writers_were_retired_for_the_retention(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as keeping, factory() as pruning:
        pruning.engine.journal.mark_retention_ms = 0
        _, writers, _, marks, retired = keeping.options.keys.scoped("app", "hal")
        client = keeping.client
        for n in range(3):
            sid = (await keeping.create_session()).id
            delta = ScopedStateDelta(scope="app", owner="hal", changes={f"k{n}": n})
            await keeping.append_messages(sid, MessageCommit(scoped_state=(delta,)))
        assert await client.hlen(marks) == 3 and await client.zcard(retired) == 3
        last = (await pruning.create_session()).id
        delta = ScopedStateDelta(scope="app", owner="hal", changes={"k3": 3})
        await pruning.append_messages(last, MessageCommit(scoped_state=(delta,)))
        # Its own retirement is due at once: every retired writer's mark went with it.
        assert await client.hlen(marks) == 0 and await client.zcard(retired) == 0
        assert await client.hlen(writers) == 0
        assert await keeping.get_scoped_state("app", "hal") == {f"k{n}": n for n in range(4)}


async def test_a_writer_that_writes_again_keeps_its_mark(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as store, factory() as crashing, factory() as pruning:
        pruning.engine.journal.mark_retention_ms = 0
        map_key, _, _, marks, retired = store.options.keys.scoped("user", "ivy")
        client = store.client
        sid = (await store.create_session()).id
        await store.append_messages(sid, with_user_delta("ivy", a=1))
        first = int(text(await client.hget(marks, sid)))
        # Its next commit announces it again (no longer retired), then the process dies.
        crashing.engine.journal.settle = _crashes  # type: ignore[method-assign]
        await crashing.append_messages(sid, with_user_delta("ivy", a=2))
        assert await client.zscore(retired, sid) is None
        # As a store of an earlier version, whose announce does not un-retire, would leave it.
        await client.zadd(retired, {sid: 0})
        other = (await pruning.create_session()).id
        await pruning.append_messages(other, with_user_delta("ivy", b=1))
        # The other writer's retirement pruned every mark due, but not the live writer's.
        assert int(text(await client.hget(marks, sid))) == first
        scripts = store.engine.scripts
        assert scripts is not None
        stale = [sid, first, "a", json.dumps(0)]
        assert await scripts.run("scs_apply", [map_key, marks], stale) == 0
        # The reader settles it, which retires it; at this retention its mark goes at once.
        assert await pruning.get_scoped_state("user", "ivy") == {"a": 2, "b": 1}
        assert not await client.hexists(marks, sid) and await client.zcard(retired) == 0
