"""One timer keeps the deadlines of the fast path's calls (``_wire.Deadlines``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from helix_agents.core import ChatMessage, MessageCommit, StoreUnavailableError
from helix_agents.store_redis import RedisStateStore
from helix_agents.store_redis._wire import Deadlines

pytestmark = pytest.mark.anyio

Freezable = tuple[str, Callable[[], None], Callable[[], None]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Deadlines cancels asyncio tasks (the fast path runs on asyncio)


async def _held(deadlines: Deadlines, hold: float) -> str:
    """A call that takes ``hold`` seconds: 'done', 'timeout', or CancelledError raised."""
    task = deadlines.arm()
    try:
        await asyncio.sleep(hold)
        return "done"
    except asyncio.CancelledError:
        if deadlines.expired(task):
            return "timeout"
        raise
    finally:
        deadlines.disarm(task)


async def test_each_call_ends_at_its_own_deadline() -> None:
    """Calls started at different times, some quick: each slow one times out one timeout
    after it started, the quick ones are untouched, and a later call is timed again."""
    deadlines = Deadlines(0.3)
    started = time.monotonic()
    ended: dict[str, float] = {}

    async def call(name: str, delay: float, hold: float) -> str:
        await asyncio.sleep(delay)
        outcome = await _held(deadlines, hold)
        ended[name] = time.monotonic() - started
        return outcome

    outcomes = await asyncio.gather(
        call("slow", 0, 10), call("quick", 0.05, 0.01), call("late", 0.15, 10)
    )
    assert list(outcomes) == ["timeout", "done", "timeout"]
    assert 0.27 <= ended["slow"] < 0.45 + 0.5, ended
    assert 0.42 <= ended["late"] < 0.6 + 0.5, ended
    assert ended["late"] - ended["slow"] >= 0.1, ended
    assert await _held(deadlines, 10) == "timeout"  # the timer is set again when needed
    assert await _held(deadlines, 0) == "done"


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    """Cancelling a call's task is not reported as a timeout, and leaves no deadline behind."""
    deadlines = Deadlines(0.2)
    call = asyncio.ensure_future(_held(deadlines, 10))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await _held(deadlines, 0.3) == "timeout"  # this task: not cancelled by the first


async def test_calls_to_a_frozen_server_time_out_each_after_the_timeout(
    frozen_redis: Freezable,
) -> None:
    """A stuck server: a commit sent on a kept connection, and one sent 0.3 s later on
    another, each raise the typed error one timeout after it was sent, not sooner."""
    url, freeze, thaw = frozen_redis
    async with RedisStateStore(url, operation_timeout=0.5) as store:
        sid = (await store.create_session()).id
        await asyncio.gather(*(store.get_messages(sid) for _ in range(2)))  # two connections
        freeze()
        started = time.monotonic()

        async def commit(text: str, delay: float) -> float:
            await asyncio.sleep(delay)
            turn = MessageCommit(messages=(ChatMessage(role="user", content=text),))
            sent = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="did not answer in time") as err:
                await store.append_messages(sid, turn)
            assert err.value.may_have_landed
            return time.monotonic() - sent

        took = await asyncio.gather(commit("a", 0), commit("b", 0.3))
        assert all(0.45 <= t < 0.5 + 1.0 for t in took), took
        assert time.monotonic() - started >= 0.75
        thaw()
        assert await store.get_message_count(sid) == 2  # both ran once the server woke
