"""The idle TTL: a session untouched for ``idle_ttl`` expires whole, and nothing else does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import anyio
import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    LateAnswerDelivery,
    MessageCommit,
    PendingApproval,
    ScopedStateDelta,
    SessionNotFoundError,
    StartRun,
    StoredContextItem,
)
from helix_agents.core.context import Compaction
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis._keys import SESSION_KEYS

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def fill_every_key(store: RedisStateStore, sid: str, user_id: str) -> None:
    """A session with something in each of its keys."""
    await store.create_session(sid, user_id=user_id)
    for key in ("k1", "k2"):
        item = ContextItem(kind="instruction", content=key)
        await store.record_context_item(sid, StoredContextItem(key=key, item=item, at=T0))
        await store.record_late_answer(
            sid, LateAnswer(call_id=key, tool_name="t", output=key, at=T0)
        )
    commit = MessageCommit(
        messages=(
            ChatMessage(role="user", content="hi"),
            ContextMessage(kind="notice", content="n"),
        ),
        start_run=StartRun(run_id="r1"),
        deliver_context_items=(ContextItemDelivery(key="k1", row_offset=1),),
        deliver_late_answers=(LateAnswerDelivery(call_id="k1", row_offset=0),),
        commit_id="c1",
    )
    await store.append_messages(sid, commit)
    approvals = [
        PendingApproval(approval_id=a, tool_name="t", tool_call_id=a, input={}, requested_at=T0)
        for a in ("a1", "a2")
    ]
    await store.add_pending_approvals(sid, approvals)
    await store.resolve_approval(sid, "a1")
    checkpoint = Checkpoint(
        checkpoint_id="cp", run_id="r1", message_count=2, state={}, created_at=T0
    )
    await store.save_checkpoint(sid, checkpoint)
    # The context store's keys: an output under a key, a compaction, and (the store
    # keeps 4 rows) an archived row.
    await store.store_output(sid, "output", key="k1")
    await store.record_compaction(sid, Compaction(boundary=1, summary="s"))
    more = tuple(ChatMessage(role="user", content=f"m{i}") for i in range(3))
    await store.append_messages(sid, MessageCommit(messages=more, fence_run_id="r1"))
    # Scoped state: the session's map, a seal (an app map settled), and a journal entry
    # whose roll-forward never ran (the process died after the commit).
    own = ScopedStateDelta(scope="session", changes={"s": 1})
    app = ScopedStateDelta(scope="app", owner="settled", changes={"a": 1})
    await store.append_messages(sid, MessageCommit(scoped_state=(own, app)))
    store.engine.journal.settle = _never  # type: ignore[method-assign]
    user = ScopedStateDelta(scope="user", owner="pending", changes={"p": 1})
    await store.append_messages(sid, MessageCommit(scoped_state=(user,)))
    del store.engine.journal.settle


async def _never(session_id: str, tokens: Mapping[str, str]) -> None:
    """A roll-forward that never happens."""


async def key_ttls(store: RedisStateStore, sid: str) -> dict[str, int]:
    """PTTL of each of the session's keys (-2 = gone, -1 = no expiry)."""
    keys = store.options.keys.session(sid)
    return {
        suffix: await store.client.pttl(key) for suffix, key in zip(SESSION_KEYS, keys, strict=True)
    }


@pytest.mark.parametrize("where", ["standalone", "cluster"])
async def test_idle_ttl_expires_the_whole_idle_session_and_nothing_else(
    where: str, request: pytest.FixtureRequest
) -> None:
    factory: Callable[..., RedisStateStore] = request.getfixturevalue(f"{where}_factory")
    async with factory(idle_ttl=1.0, max_messages=4) as store, factory() as forever:
        await fill_every_key(store, "idle", "u")
        await fill_every_key(store, "busy", "u")
        await forever.create_session("kept", user_id="u")
        ttls = await key_ttls(store, "idle")
        # Every key, one deadline; but the journal holding a landed delta has none.
        assert ttls.pop("scsj") == -1
        assert all(0 < ttl <= 1000 for ttl in ttls.values()), ttls
        assert await store.client.pttl(store.options.keys.meta("kept")) == -1
        # "busy" keeps writing; "idle" and "kept" are left alone for 1.6 s.
        with anyio.move_on_after(1.6):
            while True:
                await store.append_messages("busy", MessageCommit())
                await anyio.sleep(0.2)
        ttls = await key_ttls(store, "idle")
        assert ttls.pop("scsj") == -1 and set(ttls.values()) == {-2}
        assert await store.get_session("idle") is None
        with pytest.raises(SessionNotFoundError):
            await store.get_messages("idle")
        assert all(ttl > 0 for k, ttl in (await key_ttls(store, "busy")).items() if k != "scsj")
        assert await store.get_message_count("busy") == 5
        assert [i.key for i in await store.list_undelivered_context_items("busy")] == ["k2"]
        assert [a.approval_id for a in await store.list_pending_approvals("busy")] == ["a2"]
        assert await store.get_checkpoint("busy", "cp") is not None
        assert await forever.get_session("kept") is not None
        # The listing skips the expired session and prunes its index entry.
        index = store.options.keys.user("u")
        assert await store.client.zscore(index, "idle") is not None
        listed = await store.list_sessions("u")
        assert [s.id for s in listed.sessions] == ["busy", "kept"]
        assert await store.client.zscore(index, "idle") is None
        assert not await store.client.hexists(index + ":sum", "idle")  # and its summary
        # So does the store-wide listing, from its own index (no TTL of its own).
        every = store.options.keys.every
        assert await store.client.zscore(every, "idle") == 0
        assert await store.client.pttl(every) == -1
        everyone = await store.list_all_sessions()
        assert [s.id for s in everyone.sessions] == ["busy", "kept"]
        assert await store.client.zscore(every, "idle") is None
        # The id is free again, and the new session inherits nothing.
        await store.create_session("idle", user_id="u")
        assert await store.get_message_count("idle") == 0
        assert await store.list_pending_approvals("idle") == []
        # But for its landed user delta, which the map's next reader applies.
        assert await forever.get_scoped_state("user", "pending") == {"p": 1}
        assert await store.client.pttl(store.options.keys.session("idle", ("scsj",))[0]) == -2


async def test_a_write_without_idle_ttl_makes_the_whole_session_persistent(
    standalone_factory: Callable[..., RedisStateStore],
) -> None:
    async with (
        standalone_factory(idle_ttl=60, max_messages=4) as expiring,
        standalone_factory() as keeping,
    ):
        await fill_every_key(expiring, "s", "u")
        ttls = await key_ttls(expiring, "s")
        assert ttls.pop("scsj") == -1 and all(ttl > 0 for ttl in ttls.values())
        await keeping.append_messages("s", MessageCommit())
        assert set((await key_ttls(keeping, "s")).values()) == {-1}
        assert await keeping.client.pttl(keeping.options.keys.user("u")) == -1
        await expiring.append_messages("s", MessageCommit())
        ttls = await key_ttls(expiring, "s")
        assert ttls.pop("scsj") == -1 and all(0 < ttl <= 60_000 for ttl in ttls.values())
