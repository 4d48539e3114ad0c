"""HelixEventStore's rules MCP-1..MCP-7 (docs/integrations/mcp.md), on every backend."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from helix_backends import Stores
from mcp_fixtures import Sent, notification, response
from mcp_types import JSONRPCNotification

from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore, ValidationError
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.mcp import (
    EVENT_FIELD,
    REPLAY_PAGE,
    STREAM_KEY,
    CorruptEventError,
    HelixEventStore,
)

pytestmark = pytest.mark.anyio


async def _session_count(store: SessionStateStore) -> int:
    count, cursor = 0, None
    while True:
        page = await store.list_all_sessions(first=500, cursor=cursor)
        count += len(page.sessions)
        cursor = page.next_cursor
        if cursor is None:
            return count


async def test_mcp1_a_stream_is_a_marked_session_and_an_event_a_row(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store)
    priming = await events.store_event("7", None)
    first = await events.store_event("7", notification("tick"))
    last = await events.store_event("7", response(7))
    session_id = priming.rpartition(":")[0]
    assert [priming, first, last] == [f"{session_id}:{i}" for i in range(3)]
    info = await store.get_session(session_id)
    assert info is not None
    assert info.metadata == {ADAPTER_KEY: "mcp", STREAM_KEY: "7"}
    rows = await store.get_messages(session_id)
    assert [getattr(row, "id", None) for row in rows] == ["0", "1", "2"]
    assert [(row.model_extra or {})[EVENT_FIELD] is None for row in rows] == [True, False, False]


async def test_mcp1_a_priming_event_starts_a_new_stream(store: SessionStateStore) -> None:
    events = HelixEventStore(store)
    old = await events.store_event("1", None)
    await events.store_event("1", response(1))
    new = await events.store_event("1", None)  # the same request id, a new request
    unrelated = await events.store_event("_GET_stream", notification("elsewhere"))
    sessions = {e.rpartition(":")[0] for e in (old, new, unrelated)}
    assert len(sessions) == 3
    sent = Sent()
    assert await events.replay_events_after(old, sent) == "1"
    assert sent.messages == [response(1)]


async def _foreign(store: SessionStateStore) -> str:
    info = await store.create_session(metadata=mark("openai-agents", {STREAM_KEY: "1"}))
    return f"{info.id}:0"


async def _unmarked(store: SessionStateStore) -> str:
    info = await store.create_session(metadata={STREAM_KEY: "1"})
    await store.append_messages(
        info.id, MessageCommit(messages=(ChatMessage(role="user", content="hi"),))
    )
    return f"{info.id}:0"


async def test_mcp2_an_id_that_names_no_stream_replays_nothing(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store)
    real = await events.store_event("1", None)
    await events.store_event("1", notification("after"))
    session_id = real.rpartition(":")[0]
    unknown = [
        "",
        "0",
        "no-such-event",
        ":0",
        f"{session_id}:",
        f"{session_id}:-1",
        f"{session_id}:01",
        f"{session_id}:+1",
        f"{session_id}:1e3",
        f"{session_id}:٣",  # a non-ASCII digit
        f"{session_id}:{'9' * 20}",
        f"{session_id}:2",  # past the stream's last event
        f"{session_id}x:0",
        "a\x00b:0",
        "\udc80:0",
        f"{'s' * 100_000}:0",
        "{" * 10_000 + ":0",
        await _foreign(store),
        await _unmarked(store),
    ]
    for bad in unknown:
        sent = Sent()
        assert await events.replay_events_after(bad, sent) is None, repr(bad[:40])
        assert sent.events == []


async def test_mcp3_replay_sends_the_streams_later_events_on_another_server(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    before = HelixEventStore(store)
    ids = [await before.store_event("1", None)]
    ids += [await before.store_event("1", notification(f"tick {i}")) for i in range(3)]
    await before.store_event("_GET_stream", notification("not this stream"))
    ids.append(await before.store_event("1", response(1)))

    after = HelixEventStore(other_store)  # a restarted server on the same data
    sent = Sent()
    assert await after.replay_events_after(ids[1], sent) == "1"
    assert sent.ids == ids[2:]
    assert sent.messages == [notification("tick 1"), notification("tick 2"), response(1)]
    # The resumed stream goes on in the same session; its priming event is a cursor at the
    # stream's last event, written nowhere.
    resumed = [await after.store_event("1", None), await after.store_event("1", response(1))]
    assert resumed == [f"{ids[0].rpartition(':')[0]}:{i}" for i in (4, 5)]
    assert await other_store.get_message_count(ids[0].rpartition(":")[0]) == 6
    again = Sent()
    assert await after.replay_events_after(ids[-1], again) == "1"
    assert again.ids == [resumed[1]]


async def test_mcp3_replay_pages_through_a_long_stream(store: SessionStateStore) -> None:
    events = HelixEventStore(store)
    first = await events.store_event("long", None)
    total = 2 * REPLAY_PAGE + 7
    for i in range(total):
        await events.store_event("long", notification(str(i)))
    sent = Sent()
    assert await HelixEventStore(store).replay_events_after(first, sent) == "long"
    assert sent.messages == [notification(str(i)) for i in range(total)]
    assert sent.ids == [f"{first.rpartition(':')[0]}:{i}" for i in range(1, total + 1)]


async def test_mcp4_two_servers_appending_to_one_stream_never_reuse_an_id(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    one = HelixEventStore(store)
    start = await one.store_event("s", None)
    two = HelixEventStore(other_store)
    assert await two.replay_events_after(start, Sent()) == "s"

    async def write(events: HelixEventStore, tag: str) -> list[str]:
        return [await events.store_event("s", notification(f"{tag}{i}")) for i in range(10)]

    a, b = await asyncio.gather(write(one, "a"), write(two, "b"))
    assert len(set(a) | set(b)) == 20
    sent = Sent()
    await HelixEventStore(store).replay_events_after(start, sent)
    assert sorted(sent.ids, key=lambda i: int(i.rpartition(":")[2])) == sent.ids  # type: ignore[union-attr]
    assert set(sent.ids) == set(a) | set(b)
    texts = [m.params["data"] for m in sent.messages if isinstance(m, JSONRPCNotification)]  # type: ignore[index]
    assert [t for t in texts if t.startswith("a")] == [f"a{i}" for i in range(10)]
    assert [t for t in texts if t.startswith("b")] == [f"b{i}" for i in range(10)]


async def test_mcp5_a_stream_idle_past_the_ttl_is_not_replayed_and_is_purged(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store, ttl=timedelta(milliseconds=200))
    first = await events.store_event("1", None)
    await events.store_event("1", response(1))
    assert await events.replay_events_after(first, Sent()) == "1"
    keep = HelixEventStore(store)  # no ttl: the stream is still there to purge
    await asyncio.sleep(0.3)
    assert await events.replay_events_after(first, Sent()) is None
    assert await keep.replay_events_after(first, Sent()) == "1"
    assert await events.purge_expired() >= 1
    assert await store.get_session(first.rpartition(":")[0]) is None
    assert await keep.purge_expired() == 0


async def test_mcp5_an_id_whose_successors_retention_dropped_replays_nothing(
    stores: Stores,
) -> None:
    async with stores.store("retained", max_messages=3) as store:
        events = HelixEventStore(store)
        ids = [await events.store_event("1", None)]
        ids += [await events.store_event("1", notification(str(i))) for i in range(5)]
        assert await events.replay_events_after(ids[0], Sent()) is None  # 1..2 are gone
        sent = Sent()
        assert await events.replay_events_after(ids[2], sent) == "1"  # 3..5 are kept
        assert sent.ids == ids[3:]


@pytest.mark.parametrize(
    "stream_id",
    ["", "a\x00b", "\udc80", "s" * 513, 7],
    ids=["empty", "nul", "lone-surrogate", "too-long", "not-a-string"],
)
async def test_mcp6_a_bad_stream_id_is_refused_and_the_store_unchanged(
    store: SessionStateStore, stream_id: object
) -> None:
    events = HelixEventStore(store)
    before = await _session_count(store)
    with pytest.raises(ValidationError) as caught:
        await events.store_event(stream_id, notification("x"))  # type: ignore[arg-type]
    assert caught.value.code == "validation_error"
    assert "stream_id" in str(caught.value)
    assert await _session_count(store) == before


async def test_mcp6_a_message_the_store_cannot_hold_is_refused_and_the_store_unchanged(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store)
    nested: object = "leaf"
    for _ in range(1_000):
        nested = {"n": nested}
    deep = JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params=nested)
    before = await _session_count(store)
    with pytest.raises(ValidationError) as caught:
        await events.store_event("1", deep)
    assert caught.value.code == "validation_error"
    assert await _session_count(store) == before
    # On a stream that exists, the refusal leaves its rows as they were.
    first = await events.store_event("1", None)
    with pytest.raises(ValidationError):
        await events.store_event("1", deep)
    assert await store.get_message_count(first.rpartition(":")[0]) == 1


async def test_mcp6_a_huge_message_round_trips_exactly(store: SessionStateStore) -> None:
    events = HelixEventStore(store)
    first = await events.store_event("big", None)
    huge = notification("é\u2028" * 500_000 + "\U0001f600")
    await events.store_event("big", huge)
    sent = Sent()
    assert await HelixEventStore(store).replay_events_after(first, sent) == "big"
    assert sent.messages == [huge]


async def test_mcp7_a_corrupt_event_row_is_a_typed_error(store: SessionStateStore) -> None:
    events = HelixEventStore(store)
    first = await events.store_event("1", None)
    session_id = first.rpartition(":")[0]
    row = ChatMessage(role="assistant", content=None, id="1", **{EVENT_FIELD: "{not json"})
    await store.append_messages(session_id, MessageCommit(messages=(row,)))
    with pytest.raises(CorruptEventError) as caught:
        await events.replay_events_after(first, Sent())
    assert caught.value.code == "validation_error"
    assert (caught.value.session_id, caught.value.row_id) == (session_id, "1")


async def test_mcp1_a_stream_id_forgotten_past_max_streams_starts_a_new_stream(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store, max_streams=2)
    first = await events.store_event("a", None)
    await events.store_event("b", None)
    await events.store_event("c", None)  # "a" is the least recently used: forgotten
    again = await events.store_event("a", notification("x"))
    assert again.rpartition(":")[0] != first.rpartition(":")[0]
    assert again.endswith(":0")


async def test_mcp3_a_priming_after_a_replay_points_at_the_last_event_replayed(
    store: SessionStateStore,
) -> None:
    events = HelixEventStore(store)
    first = await events.store_event("1", None)
    tick = await events.store_event("1", notification("a"))
    resumed = HelixEventStore(store)
    assert await resumed.replay_events_after(first, Sent()) == "1"
    late = await resumed.store_event("1", notification("late"))  # before the SDK's priming
    priming = await resumed.store_event("1", None)
    assert priming == tick  # so a reconnect from it gets the late event
    sent = Sent()
    assert await resumed.replay_events_after(priming, sent) == "1"
    assert sent.ids == [late]


@pytest.mark.parametrize(
    "options",
    [
        {"ttl": timedelta(0)},
        {"ttl": timedelta(seconds=-1)},
        {"max_streams": 0},
        {"max_streams": True},
    ],
    ids=["ttl-zero", "ttl-negative", "max-streams-zero", "max-streams-bool"],
)
async def test_mcp5_bad_options_are_refused(
    store: SessionStateStore, options: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError) as caught:
        HelixEventStore(store, **options)
    assert caught.value.code == "validation_error"
