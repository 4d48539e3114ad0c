"""The adapters' edge rules ADP-1..ADP-7 (docs/integrations/sharing.md) for the saver."""

from __future__ import annotations

import asyncio
import math
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore, ValidationError
from helix_agents.core import Checkpoint as Record
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.core.errors import ForeignSessionError, StateStoreError, StoreUnavailableError
from helix_agents.langgraph import (
    CorruptRecordError,
    EventLoopError,
    HelixCheckpointSaver,
    UnstorableValueError,
)
from helix_agents.langgraph._layout import checkpoint_key, write_key
from helix_agents.langgraph._runs import RUN_INDEX
from helix_agents.langgraph._values import same
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_redis import RedisStateStore

from .test_saver import META, Backend, _checkpoint, _config

pytestmark = pytest.mark.anyio


async def _records(store: SessionStateStore, session: str) -> list[tuple[str, Any]]:
    """Every checkpoint record of a session, read around the saver."""
    if await store.get_session(session) is None:
        return []
    found, before = [], None
    while page := await store.page_checkpoints(session, before=before, limit=500):
        found += [(r.checkpoint_id, r.state) for r in page]
        before = page[-1].checkpoint_id
    return found


async def _plant(store: SessionStateStore, session: str, key: str, state: Any) -> None:
    record = Record(
        checkpoint_id=key,
        run_id="planted",
        message_count=0,
        state=state,
        created_at=datetime.now(UTC),
    )
    assert (await store.save_checkpoint(session, record)).recorded


def _run(run_id: str) -> dict[str, Any]:
    return {"source": "loop", "step": 0, "run_id": run_id}


async def test_adp1_threads_and_the_run_index_carry_the_langgraph_mark(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        await saver.aput(_config(thread), _checkpoint(), _run("r1"), {})  # type: ignore[arg-type]
        copy = f"copy-{thread}"
        await saver.acopy_thread(thread, copy)
        for session in (thread, copy, RUN_INDEX):
            info = await store.get_session(session)
            assert info is not None and info.metadata[ADAPTER_KEY] == "langgraph"


async def test_adp2_another_adapters_session_is_absent_and_refuses_writes(
    backend: Backend,
) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        mine, theirs = str(uuid.uuid4()), str(uuid.uuid4())
        stored = await saver.aput(_config(mine), _checkpoint(x=1), META, {})
        # A saver-shaped record in the other adapter's session, which a read would return.
        [(key, state)] = await _records(store, mine)
        await store.create_session(theirs, metadata=mark("adk", {"app": 1}))
        await _plant(store, theirs, key, state)
        before = await _records(store, theirs)
        index = await _records(store, RUN_INDEX)
        cid = stored["configurable"]["checkpoint_id"]

        assert await saver.aget_tuple(_config(theirs)) is None
        assert await saver.aget_tuple(_config(theirs, cid)) is None
        assert [t async for t in saver.alist(_config(theirs))] == []
        assert [t async for t in saver.alist({"configurable": {"thread_id": theirs}})] == []

        writes: list[Callable[[], Any]] = [
            lambda: saver.aput(_config(theirs), _checkpoint(), _run("r2"), {}),  # type: ignore[arg-type]
            lambda: saver.aput(_config(theirs, cid), _checkpoint(), META, {}),
            lambda: saver.aput_writes(_config(theirs, cid), [("ch", 1)], "task"),
            lambda: saver.adelete_thread(theirs),
            lambda: saver.acopy_thread(theirs, str(uuid.uuid4())),
            lambda: saver.acopy_thread(mine, theirs),
            lambda: saver.aprune([mine, theirs]),
            lambda: saver.aprune([mine, theirs], strategy="delete"),
        ]
        for write in writes:
            with pytest.raises(ForeignSessionError) as caught:
                await write()
            err = caught.value
            assert (err.code, err.owner, err.adapter) == (
                "state_foreign_session",
                "adk",
                "langgraph",
            )
            assert await _records(store, theirs) == before
        info = await store.get_session(theirs)
        assert info is not None and info.metadata == {"app": 1, ADAPTER_KEY: "adk"}
        assert await _records(store, RUN_INDEX) == index
        # prune refused before touching any thread: ours is whole.
        assert await saver.aget_tuple(stored) is not None

        # A run deleted through the index never reaches into a session now foreign.
        run_thread = str(uuid.uuid4())
        await saver.aput(_config(run_thread), _checkpoint(), _run("r3"), {})  # type: ignore[arg-type]
        [(run_key, run_state)] = await _records(store, run_thread)
        await store.delete_session(run_thread)
        await store.create_session(run_thread, metadata=mark("openai-agents"))
        await _plant(store, run_thread, run_key, run_state)
        await saver.adelete_for_runs(["r3"])
        assert await _records(store, run_thread) == [(run_key, run_state)]


async def test_adp2_an_unmarked_session_is_shared(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = (await store.create_session(metadata={"app": "mine"})).id
        row = ChatMessage(role="user", content="hi")
        await store.append_messages(thread, MessageCommit(messages=(row,)))
        await _plant(store, thread, "app-record", {"k": 1})
        stored = await saver.aput(_config(thread), _checkpoint(x=1), META, {})
        await saver.aput_writes(stored, [("x", 2)], "task")
        tup = await saver.aget_tuple(_config(thread))
        assert tup is not None and tup.pending_writes == [("task", "x", 2)]
        await saver.adelete_thread(thread)
        # The application's session, rows and record stay; the saver's records are gone.
        assert await saver.aget_tuple(_config(thread)) is None
        assert await store.get_messages(thread) == [row]
        assert await _records(store, thread) == [("app-record", {"k": 1})]
        info = await store.get_session(thread)
        assert info is not None and ADAPTER_KEY not in info.metadata


async def test_adp3_records_not_of_the_layout_are_skipped(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        first = await saver.aput(_config(thread), _checkpoint(n=1), META, {})
        cid = first["configurable"]["checkpoint_id"]
        await saver.aput_writes(first, [("n", 2)], "task")
        await store.append_messages(
            thread, MessageCommit(messages=(ChatMessage(role="user", content="row"),))
        )
        # Ids under the saver's prefixes that are not its layout; greater than any real id.
        junk = {
            f"c\x1f\x1f{cid}\x1fextra": {"ns": "", "id": "x"},
            "c\x1fnamespace-only": "junk",
            f"w\x1f\x1f{cid}\x1ftask": {"task": "task"},
            f"w\x1f\x1f{cid}\x1ftask\x1fnot-an-int": {"value": 1},
            "zz-other-adapter": {"what": "theirs"},
            "": None,
        }
        for key, state in junk.items():
            if key:
                await _plant(store, thread, key, state)
        latest = await saver.aget_tuple(_config(thread))
        assert latest is not None and latest.checkpoint["id"] == cid
        assert latest.pending_writes == [("task", "n", 2)]
        everything: RunnableConfig = {"configurable": {"thread_id": thread}}
        for config in (_config(thread), everything):
            assert [t.checkpoint["id"] async for t in saver.alist(config)] == [cid]
        second = await saver.aput(_config(thread, cid), _checkpoint(n=3), META, {})
        await saver.aprune([thread])
        kept = dict(await _records(store, thread))
        assert {k: kept[k] for k in junk if k} == {k: v for k, v in junk.items() if k}
        tup = await saver.aget_tuple(_config(thread))
        assert tup is not None and tup.config == second


def _nested(kind: type, depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = {level: value} if kind is dict else kind([value])
    return value


BAD_VALUES: list[tuple[str, Any]] = [
    ("nan", math.nan),
    ("inf", [1, {"k": -math.inf}]),
    ("surrogate", {"text": "a\ud800b"}),
    ("surrogate key", {"a\udfffb": 1}),
    ("surrogate in a tuple key", {("\ud800",): 1}),
    ("big int", 10**700),
    ("object", object()),
    ("deep", _nested(list, 100)),
    ("deep tuples", _nested(tuple, 60)),
    ("deep dicts", _nested(dict, 40)),
    ("a tuple a class would drop", frozenset({(1, 2)})),
]


def _refused(err: BaseException, thread: str) -> None:
    assert isinstance(err, UnstorableValueError)
    assert isinstance(err, ValidationError) and isinstance(err, TypeError)
    assert err.code == "validation_error" and not err.retryable
    assert err.session_id == thread and thread in str(err)


@pytest.mark.parametrize(("name", "value"), BAD_VALUES, ids=[n for n, _ in BAD_VALUES])
async def test_adp4_a_refused_value_writes_nothing(backend: Backend, name: str, value: Any) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        with pytest.raises(UnstorableValueError) as caught:  # the thread's first put
            await saver.aput(_config(thread), _checkpoint(ok=1, bad=value), _run("r"), {})  # type: ignore[arg-type]
        _refused(caught.value, thread)
        assert caught.value.field == "channel 'bad'"
        assert await store.get_session(thread) is None
        assert await store.get_session(RUN_INDEX) is None
        stored = await saver.aput(_config(thread), _checkpoint(ok=1), META, {})
        before = await _records(store, thread)
        refusals: list[Callable[[], Any]] = [
            lambda: saver.aput(
                _config(thread, stored["configurable"]["checkpoint_id"]),
                _checkpoint(bad=value),
                META,
                {},
            ),
            lambda: saver.aput(_config(thread), _checkpoint(), {"source": "loop", "x": value}, {}),  # type: ignore[typeddict-unknown-key]
            lambda: saver.aput_writes(stored, [("ok", 1), ("bad", value)], "task"),
        ]
        for refusal in refusals:
            with pytest.raises(UnstorableValueError) as caught:
                await refusal()
            _refused(caught.value, thread)
            assert await _records(store, thread) == before


async def test_adp4_malformed_input_is_a_validation_error(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        stored = await saver.aput(_config(thread), _checkpoint(), META, {})
        no_id = _checkpoint()
        del no_id["id"]  # type: ignore[misc]
        calls: list[Callable[[], Any]] = [
            lambda: saver.aget_tuple({}),
            lambda: saver.aget_tuple({"configurable": 1}),  # type: ignore[typeddict-item]
            lambda: saver.aget_tuple(_config("a\x00b")),
            lambda: saver.aget_tuple(_config("x" * 600)),
            lambda: saver.aget_tuple(_config(thread, checkpoint_id=7)),
            lambda: saver.aget_tuple(_config(thread, checkpoint_ns="n" * 600)),
            lambda: saver.aget_tuple(_config("\ud800")),
            lambda: saver.aput(_config(thread), no_id, META, {}),
            lambda: saver.aput(_config(thread), {"id": "x"}, META, {}),  # type: ignore[typeddict-item]
            lambda: saver.aput(_config(thread), _checkpoint(**{"\ud800": 1}), META, {}),
            lambda: saver.aput(_config(thread), _checkpoint(), 5, {}),  # type: ignore[arg-type]
            lambda: saver.aput_writes(_config(thread), [("x", 1)], "task"),
            lambda: saver.aput_writes(stored, [1, 2], "task"),  # type: ignore[list-item]
            lambda: saver.aput_writes(stored, [(1, 2)], "task"),  # type: ignore[list-item]
            lambda: saver.aput_writes(stored, [("x", 1)], 5),  # type: ignore[arg-type]
            lambda: saver.aput_writes(stored, [("x", 1)], "t" * 600),
            lambda: saver.aput_writes(stored, [("x", 1)], "task", 5),  # type: ignore[arg-type]
            lambda: _drain(saver.alist(_config(thread), filter=5)),  # type: ignore[arg-type]
            lambda: _drain(saver.alist(_config(thread), limit="2")),  # type: ignore[arg-type]
            lambda: saver.adelete_thread("a\x00"),
            lambda: saver.aprune(thread),
        ]
        before = await _records(store, thread)
        for call in calls:
            with pytest.raises(ValidationError):
                await call()
        assert await _records(store, thread) == before


async def _drain(found: Any) -> list[Any]:
    return [item async for item in found]


EXACT: dict[str, Any] = {
    "tuple": (1, ("a", None), []),
    "int keys": {1: "a", 2: {True: None, None: (1.5, -0.0)}},
    "tuple keys": {(1, "a"): b"\xff\x00", ("",): bytearray(b"x")},
    "big ints": [10**599, -(10**599), 2**64],
    "nul": {"a\x00b": "c\x00"},
    "bool and int": [True, 1, 1.0, False, 0],
    "float keys": {1.5: 1, -0.0: 2},
    "set": {1, 2, "x"},
}


async def test_adp5_what_is_accepted_comes_back_exactly(backend: Backend) -> None:
    async with backend.open() as store, backend.open() as other:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        meta = {"source": "loop", "step": 0, "odd": EXACT["tuple"]}
        stored = await saver.aput(_config(thread), _checkpoint(**EXACT), meta, {})  # type: ignore[arg-type]
        await saver.aput_writes(stored, list(EXACT.items()), "task")
        tup = await HelixCheckpointSaver(other).aget_tuple(stored)
        assert tup is not None
        assert same(tup.checkpoint["channel_values"], EXACT)
        assert same(tup.metadata["odd"], EXACT["tuple"])  # type: ignore[typeddict-item]
        assert tup.pending_writes is not None
        assert same([(c, v) for _, c, v in tup.pending_writes], list(EXACT.items()))


async def test_adp6_a_corrupt_record_is_a_typed_error(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        stored = await saver.aput(_config(thread), _checkpoint(x=1), META, {})
        [(_, good)] = await _records(store, thread)
        assert isinstance(good, dict)
        broken: list[Any] = [
            "not an object",
            [1, 2],
            {"ns": ""},
            {**good, "values": {"x": {"t": "msgpack", "b": "%%% not base64"}}},
            {**good, "values": {"x": {"t": "msgpack", "b": "/w=="}}},  # not msgpack
            {**good, "values": {"x": {"t": "msgpack", "b": "2QL/"}}},  # invalid UTF-8
            {**good, "values": {"x": {"zz": 1}}},
            {**good, "values": {"x": {"d": [[{"l": []}, {"j": 1}]]}}},  # an unhashable key
            {**good, "values": {"x": {"l": 5}}},
            {**good, "values": 7},
            {**good, "metadata": {"j": "not a dict"}},
            {**good, "id": "another id"},
            {**good, "parent": 5},
            {key: value for key, value in good.items() if key != "checkpoint"},
        ]
        for state in broken:
            checkpoint_id = _checkpoint()["id"]
            key = checkpoint_key("", checkpoint_id)
            await _plant(store, thread, key, state)
            for call in (
                lambda: saver.aget_tuple(_config(thread, checkpoint_id)),  # noqa: B023
                lambda: saver.aget_tuple(_config(thread)),
                lambda: _drain(saver.alist(_config(thread))),
            ):
                with pytest.raises(CorruptRecordError) as caught:
                    await call()
                assert caught.value.code == "validation_error"
                assert (caught.value.session_id, caught.value.record) == (thread, key)
                assert thread in str(caught.value) and repr(key) in str(caught.value)
            await store.delete_checkpoints(thread, [key])
        cid = stored["configurable"]["checkpoint_id"]
        write = write_key("", cid, "task", 0)
        await _plant(store, thread, write, {"task": "task", "idx": 0, "path": ""})
        with pytest.raises(CorruptRecordError) as caught:
            await saver.aget_tuple(stored)
        assert caught.value.record == write
        # A thread with a corrupt record can still be deleted.
        await _plant(store, thread, checkpoint_key("", _checkpoint()["id"]), "junk")
        await saver.adelete_thread(thread)
        assert await store.get_session(thread) is None


async def test_adp7_a_sync_call_fails_at_once_when_the_loop_is_not_running() -> None:
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever)
    runner.start()
    store = MemoryStateStore()

    async def opened() -> HelixCheckpointSaver:
        await store.__aenter__()
        return HelixCheckpointSaver(store)

    saver = asyncio.run_coroutine_threadsafe(opened(), loop).result(5)
    thread = str(uuid.uuid4())
    stored = saver.put(_config(thread), _checkpoint(x=1), META, {})
    assert saver.get_tuple(stored) is not None
    loop.call_soon_threadsafe(loop.stop)
    runner.join(5)
    try:
        calls: list[Callable[[], Any]] = [
            lambda: saver.get_tuple(stored),
            lambda: list(saver.list(_config(thread))),
            lambda: saver.put(_config(thread), _checkpoint(), META, {}),
            lambda: saver.put_writes(stored, [("x", 1)], "task"),
        ]
        for call in calls:
            started = time.monotonic()
            with pytest.raises(EventLoopError) as caught:
                call()
            assert time.monotonic() - started < 1.0
            assert isinstance(caught.value, StateStoreError)
            assert isinstance(caught.value, asyncio.InvalidStateError)
            assert caught.value.code == "langgraph_event_loop"
        # A loop that stops while a call waits on it: the call fails within a poll.
        runner = threading.Thread(target=loop.run_forever)
        runner.start()
        blocker = threading.Event()

        def stop_soon() -> None:
            blocker.wait(5)
            loop.call_soon_threadsafe(loop.stop)

        async def slow() -> HelixCheckpointSaver:
            blocker.set()
            await asyncio.sleep(30)
            return saver

        stopper = threading.Thread(target=stop_soon)
        stopper.start()
        started = time.monotonic()
        with pytest.raises(EventLoopError):
            saver._sync(slow())
        assert time.monotonic() - started < 2.0
        stopper.join(5)
        runner.join(5)
    finally:  # on a thread of its own: this test's thread runs the test runner's loop
        closer = threading.Thread(target=lambda: loop.run_until_complete(store.close()))
        closer.start()
        closer.join(5)
        loop.close()
    with pytest.raises(EventLoopError):  # a closed loop
        saver.get_tuple(stored)


TIMEOUT = 0.5
SLACK = 1.5  # scheduling on a busy two-core machine


async def test_adp7_a_frozen_redis_server_fails_within_the_deadline(
    frozen_redis: tuple[str, Callable[[], None]],
) -> None:
    url, freeze = frozen_redis
    async with RedisStateStore(url, operation_timeout=TIMEOUT, connect_timeout=TIMEOUT) as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        stored = await saver.aput(_config(thread), _checkpoint(x=1), _run("r"), {})  # type: ignore[arg-type]
        freeze()
        everything: RunnableConfig = {"configurable": {"thread_id": thread}}
        calls: list[Callable[[], Any]] = [
            lambda: saver.aget_tuple(stored),
            lambda: saver.aget_tuple(_config(thread)),
            lambda: _drain(saver.alist(everything)),
            lambda: saver.aput(
                _config(thread, stored["configurable"]["checkpoint_id"]), _checkpoint(), META, {}
            ),
            lambda: saver.aput_writes(stored, [("x", 2)], "task"),
            lambda: saver.adelete_thread(thread),
            lambda: saver.acopy_thread(thread, str(uuid.uuid4())),
            lambda: saver.aprune([thread]),
            lambda: saver.adelete_for_runs(["r"]),
        ]
        for call in calls:
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError) as caught:
                await call()
            assert caught.value.retryable and caught.value.code == "state_unavailable"
            assert time.monotonic() - started < TIMEOUT + SLACK
