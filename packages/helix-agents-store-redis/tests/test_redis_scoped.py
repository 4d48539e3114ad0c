"""Scoped state's journal on standalone Redis and on the three-node cluster (docs/scoped-state.md).

A crash between the commit and the roll-forward is made by a store whose roll-forward
does nothing; everything else is the real server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from helix_agents.core import ChatMessage, MessageCommit, ScopedStateDelta
from helix_agents.store_redis import RedisStateStore

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


async def test_a_crash_after_the_commit_is_repaired_by_the_next_reader_once(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as crashing, factory() as reader:
        crashing._settle = _crashes  # type: ignore[method-assign]
        sid = (await crashing.create_session()).id
        await crashing.append_messages(sid, with_user_delta("ada", a=1, big=10**30))
        client = reader.client
        map_key, writers, _, marks = reader.options.keys.scoped("user", "ada")
        journal = reader.options.keys.session(sid, ("scsj",))[0]
        # Landed with its rows, not yet in the map: the journal and the writers entry hold it.
        assert await client.hlen(map_key) == 0
        assert await client.hlen(journal) == 1
        assert await client.hexists(writers, sid)
        assert await reader.get_scoped_state("user", "ada") == {"a": 1, "big": 10**30}
        assert await client.hlen(journal) == 0
        assert not await client.hexists(writers, sid)
        assert await client.hget(marks, sid) in (b"1", "1")
        # A later delta wins; replaying the old entry (a second roll-forward) changes nothing.
        await reader.append_messages(sid, with_user_delta("ada", a=2))
        _, scripts = reader._live()
        pairs = ["a", json.dumps(1)]
        assert await scripts.run("scs_apply", [map_key, marks], [sid, 1, *pairs]) == 0
        assert await reader.get_scoped_state("user", "ada") == {"a": 2, "big": 10**30}


async def test_a_delete_applies_the_journal_first(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as crashing, factory() as other:
        crashing._settle = _crashes  # type: ignore[method-assign]
        sid = (await crashing.create_session()).id
        await crashing.append_messages(sid, with_user_delta("bob", kept=True))
        assert await other.delete_session(sid)
        assert await other.get_scoped_state("user", "bob") == {"kept": True}


async def test_a_commit_sealed_by_a_reader_announces_again_and_lands(
    factory: Callable[..., RedisStateStore],
) -> None:
    async with factory() as writer, factory() as reader:
        sid = (await writer.create_session()).id
        announce = writer._announce
        rounds: list[dict[str, str]] = []

        async def announce_then_a_reader_seals(session_id: str, maps: Any) -> dict[str, str]:
            tokens = await announce(session_id, maps)
            rounds.append(tokens)
            if len(rounds) == 1:
                # The reader settles the writer (nothing pending yet), seals, and drops it.
                assert await reader.get_scoped_state("user", "cy") == {}
            return tokens

        writer._announce = announce_then_a_reader_seals  # type: ignore[method-assign]
        result = await writer.append_messages(sid, with_user_delta("cy", n=1))
        assert result.message_count == 1 and len(rounds) == 2
        assert await reader.get_scoped_state("user", "cy") == {"n": 1}
        _, writers, _, _ = reader.options.keys.scoped("user", "cy")
        assert await reader.client.hlen(writers) == 0
