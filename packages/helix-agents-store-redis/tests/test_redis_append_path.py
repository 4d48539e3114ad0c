"""The common append (lua/append.lua) against the full commit (lua/commit.lua): the same
results, the same refusals and the same stored state, standalone and on a cluster."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    MessageCommit,
    PendingApproval,
    StartRun,
)
from helix_agents.core.context import Compaction
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis._keys import SESSION_KEYS, summaries_of

pytestmark = pytest.mark.anyio

_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _rows(*texts: str) -> tuple[ChatMessage | ContextMessage, ...]:
    return tuple(
        ContextMessage(kind="notice", content=t[4:])
        if t.startswith("ctx:")
        else ChatMessage(role="user", content=t)
        for t in texts
    )


def _commit(*texts: str, **fields: Any) -> MessageCommit:
    return MessageCommit(messages=_rows(*texts), **fields)


async def _script(store: RedisStateStore, sid: str, user: str) -> list[object]:
    """Every operation's outcome, in order: its result, or its error's type and message."""
    out: list[object] = []

    async def step(call: Awaitable[object]) -> None:
        try:
            out.append(await call)
        except Exception as exc:  # the error itself is what is compared
            out.append((type(exc).__name__, str(exc)))

    a = store.append_messages
    await step(a("missing", _commit("x")))
    await step(store.create_session(sid, user_id=user))
    await step(a(sid, _commit("one", "two", "ctx:note", expect_message_count=0)))
    await step(a(sid, _commit("late", expect_message_count=1)))
    await step(a(sid, _commit("three", commit_id="c1")))
    await step(a(sid, _commit("three", commit_id="c1")))  # replayed
    await step(a(sid, _commit("x", fence_run_id="r1")))  # no run yet
    await step(a(sid, _commit("start", start_run=StartRun(run_id="r1"))))
    await step(a(sid, _commit("fenced", fence_run_id="r1", expect_message_count=5)))
    await step(a(sid, _commit("stale", fence_run_id="r0")))
    await step(a(sid, _commit("c1 again", commit_id="c1", fence_run_id="r0")))  # replay first
    await step(
        store.add_pending_approvals(
            sid,
            [
                PendingApproval(
                    approval_id="p1", tool_name="t", tool_call_id="k", input={}, requested_at=_AT
                )
            ],
        )
    )
    await step(a(sid, _commit("after approval", "ctx:seen", fence_run_id="r1")))
    await step(store.finish_run(sid, "r1", "completed"))
    await step(a(sid, _commit("finished", fence_run_id="r1")))
    await step(a(sid, _commit()))  # no rows
    await step(store.record_compaction(sid, Compaction(boundary=2, summary="s")))
    for i in range(4):  # retention archives the preserved rows
        await step(a(sid, _commit(f"r{i}", "ctx:r", commit_id=f"k{i}")))
    await step(store.get_messages(sid))
    return out


async def _stored(store: RedisStateStore, sid: str, user_id: str) -> dict[str, object]:
    """Every key of the session and of its user's listing: type, value, whether it expires."""
    client = store.client
    keys = store.options.keys
    user = keys.user(user_id)
    names = dict(zip(SESSION_KEYS, keys.session(sid), strict=True))
    names |= {"user": user, "user:sum": summaries_of(user)}
    state: dict[str, object] = {}
    for name, key in names.items():
        kind = await client.type(key)
        value: object
        if kind == "hash":
            value = await client.hgetall(key)
        elif kind == "list":
            value = await client.lrange(key, 0, -1)
        elif kind == "zset":
            value = await client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            value = sorted(await client.smembers(key))
        else:
            value = None
        state[name] = (kind, value, await client.pttl(key) > 0)
    return state


def _spy(store: RedisStateStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the scripts ``store`` runs, in order, from now on."""
    names: list[str] = []
    run = store._run

    async def spy(name: str, *args: Any, **kw: Any) -> Any:
        names.append(name)
        return await run(name, *args, **kw)

    monkeypatch.setattr(store, "_run", spy)
    return names


async def _never(*_: object) -> list[str]:
    return ["full"]  # as append.lua answers when it leaves the commit to commit.lua


@pytest.mark.parametrize("where", ["standalone_factory", "cluster_factory"])
async def test_plain_appends_store_what_the_full_commit_stores(
    where: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same operations through append.lua and (forced) through commit.lua only: every
    result and refusal, and every key they leave, are equal; append.lua ran."""
    factory: Callable[..., RedisStateStore] = request.getfixturevalue(where)
    outcomes, states, ran = [], [], []
    for way in ("plain", "full"):
        store = factory(max_messages=4, clock=lambda: _AT)
        names = _spy(store, monkeypatch)
        if way == "full":
            monkeypatch.setattr(store, "_append_plain", _never)
        sid, user = f"s-{way}", f"u-{way}"
        async with store:
            # The ids differ (one namespace): they are named alike before comparing.
            outcomes.append(repr(await _script(store, sid, user)).replace(way, "WAY"))
            states.append(repr(await _stored(store, sid, user)).replace(way, "WAY"))
        ran.append(names)
    assert outcomes[0] == outcomes[1]
    assert states[0] == states[1]
    assert ran[0].count("append") == 16 and "append" not in ran[1]
    assert ran[0].count("commit") == 1  # the run start
    # The sequence covered what the script claims: refusals, a replay, retention's archive.
    for shown in ("MessageCountConflictError", "RunSupersededError", "replayed=True"):
        assert shown in outcomes[0]
    assert "'arch': ('list'" in states[0]


async def test_a_session_with_a_deadline_is_left_to_the_full_commit(
    standalone_factory: Callable[..., RedisStateStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session written under an idle TTL and appended to by a store without one: append.lua
    declares too few keys to drop the deadline, so commit.lua writes it (and drops it on
    every key, as before)."""
    async with standalone_factory(idle_ttl=60) as timed:
        await timed.create_session("s", user_id="ada")
        await timed.append_messages("s", _commit("one", commit_id="c1"))
        keys = timed.options.keys.session("s")
        assert await timed.client.pttl(keys[0]) > 0
    async with standalone_factory() as store:
        names = _spy(store, monkeypatch)
        done = await store.append_messages("s", _commit("two", expect_message_count=1))
        assert done.message_count == 2
        assert names == ["append", "commit"]
        ttls = [await store.client.pttl(k) for k in keys]
        assert ttls[0] == -1 and set(ttls) <= {-1, -2}  # -2: no such key
        assert await store.get_messages("s") == list(_rows("one", "two"))
