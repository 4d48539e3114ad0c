"""What the conformance suite leaves out: racing writers, forks, what loading refuses, sync use."""

from __future__ import annotations

import asyncio
import base64
import pickle
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from pydantic import JsonValue

from helix_agents.core import Checkpoint as Record
from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.errors import StaleCheckpointError
from helix_agents.langgraph import FORK, HelixCheckpointSaver
from helix_agents.langgraph._layout import checkpoint_key, claim_key
from helix_agents.langgraph._runs import RUN_INDEX
from helix_agents.langgraph._values import same
from helix_agents.langgraph.errors import UnstorableValueError

pytestmark = pytest.mark.anyio
EXECUTED: list[str] = []


class Backend(Protocol):
    """The ``backend`` fixture: a backend's name, and a store opener on the test's data."""

    name: str
    open: Callable[[], AbstractAsyncContextManager[SessionStateStore]]


@dataclass
class Unlisted:
    """A class no allow-list names: loading must not rebuild it."""

    name: str


class Payload:
    """Unpickling this records that code ran."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (EXECUTED.append, ("unpickled",))


def _checkpoint(**values: Any) -> Checkpoint:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=-1))
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = dict.fromkeys(values, 1)
    return checkpoint


def _config(thread: str, parent: str | None = None, **extra: Any) -> RunnableConfig:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": "", **extra}
    if parent is not None:
        conf["checkpoint_id"] = parent
    return {"configurable": conf}


META: CheckpointMetadata = {"source": "loop", "step": 0}


async def test_racing_children_of_one_parent_one_lands(backend: Backend) -> None:
    async with backend.open() as a, backend.open() as b:
        savers = [HelixCheckpointSaver(a), HelixCheckpointSaver(b)]
        thread = str(uuid.uuid4())
        root = await savers[0].aput(_config(thread), _checkpoint(), META, {})
        parent = root["configurable"]["checkpoint_id"]
        chain = [parent]
        for _ in range(3):
            children = [_checkpoint(who=n) for n in range(4)]
            outcomes = await asyncio.gather(
                *(
                    savers[n % 2].aput(_config(thread, parent), child, META, {})
                    for n, child in enumerate(children)
                ),
                return_exceptions=True,
            )
            landed = [n for n, out in enumerate(outcomes) if not isinstance(out, BaseException)]
            refused = [out for out in outcomes if isinstance(out, BaseException)]
            assert len(landed) == 1
            assert all(isinstance(e, StaleCheckpointError) for e in refused)
            assert all(e.code == "state_concurrency_conflict" and e.retryable for e in refused)  # type: ignore[attr-defined]
            winner = children[landed[0]]["id"]
            assert {e.child_id for e in refused} == {winner}  # type: ignore[attr-defined]
            latest = await savers[1].aget_tuple(_config(thread))
            assert latest is not None and latest.checkpoint["id"] == winner
            chain.insert(0, winner)
            assert [t.checkpoint["id"] async for t in savers[0].alist(_config(thread))] == chain
            parent = winner


async def test_stale_parent_refused_retry_and_fork_allowed(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        root = (await saver.aput(_config(thread), _checkpoint(), META, {}))["configurable"]
        first = _checkpoint(n=1)
        await saver.aput(_config(thread, root["checkpoint_id"]), first, META, {})
        await saver.aput(_config(thread, root["checkpoint_id"]), first, META, {})  # a retry
        late = _checkpoint(n=2)
        with pytest.raises(StaleCheckpointError) as caught:
            await saver.aput(_config(thread, root["checkpoint_id"]), late, META, {})
        assert (caught.value.parent_id, caught.value.child_id) == (
            root["checkpoint_id"],
            first["id"],
        )
        assert await saver.aget_tuple(_config(thread, late["id"])) is None
        fork = _checkpoint(n=3)
        forked = _config(thread, root["checkpoint_id"], **{FORK: True})
        await saver.aput(forked, fork, META, {})
        tup = await saver.aget_tuple(_config(thread, fork["id"]))
        assert tup is not None and tup.parent_config is not None
        assert tup.parent_config["configurable"]["checkpoint_id"] == root["checkpoint_id"]
        assert tup.checkpoint["channel_values"] == {"n": 3}


async def test_a_put_stopped_after_its_claim_is_finished_by_the_next(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        root = (await saver.aput(_config(thread), _checkpoint(), META, {}))["configurable"]
        parent = root["checkpoint_id"]
        # The first writer's claim landed, then its process died before the checkpoint did.
        await saver.aput(_config(thread, parent), _checkpoint(n=1), META, {})
        [claimed] = await store.page_checkpoints(thread, prefix=claim_key("", parent))
        assert isinstance(claimed.state, dict)
        child_id = str(claimed.state["id"])
        assert await store.delete_checkpoints(thread, [checkpoint_key("", child_id)]) == 1
        latest = await saver.aget_tuple(_config(thread))
        assert latest is not None and latest.checkpoint["id"] == parent
        with pytest.raises(StaleCheckpointError):
            await saver.aput(_config(thread, parent), _checkpoint(n=2), META, {})
        latest = await saver.aget_tuple(_config(thread))
        assert latest is not None and latest.checkpoint["id"] == child_id
        assert latest.checkpoint["channel_values"] == {"n": 1}


async def test_values_round_trip_and_loading_refuses_code(backend: Backend) -> None:
    async with backend.open() as store:
        values: dict[str, Any] = {
            "tuple": (1, "a"),
            "set": {1, 2},
            "when": datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
            "id": uuid.UUID(int=7),
            "raw": b"\x00\xff",
            "nul": "a\x00b",
            "message": AIMessage(content="hi", id="m1"),
            "nested": {"k": [1, 2.5, None, True]},
        }
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        stored = await saver.aput(_config(thread), _checkpoint(**values), META, {})
        # A class outside the allow-list would come back as its fields: refused (ADP-5).
        with pytest.raises(UnstorableValueError):
            await saver.aput_writes(stored, [("ch", Unlisted("w"))], "task-1")
        allowed = HelixCheckpointSaver(store, allowed_modules=[(__name__, "Unlisted")])
        await allowed.aput_writes(stored, [("ch", Unlisted("w"))], "task-1")
        tup = await saver.aget_tuple(stored)
        assert tup is not None
        # Exactly as put: the tuple stays a tuple.
        assert same(tup.checkpoint["channel_values"], values)
        # A saver without the allow-list never rebuilds the class: it reads its fields.
        assert tup.pending_writes == [("task-1", "ch", {"name": "w"})]
        again = await allowed.aget_tuple(stored)
        assert again is not None and again.pending_writes == [("task-1", "ch", Unlisted("w"))]
        # A pickled value, planted by hand, is refused without being unpickled.
        planted: JsonValue = {
            "t": "pickle",
            "b": base64.b64encode(pickle.dumps(Payload())).decode(),
        }
        record = (await store.page_checkpoints(thread, prefix=checkpoint_key("", "")))[0]
        assert isinstance(record.state, dict)
        state: dict[str, JsonValue] = dict(record.state)
        state["values"] = {"evil": planted}
        evil = _checkpoint()
        state["id"] = evil["id"]
        await store.save_checkpoint(
            thread,
            Record(
                **{
                    **record.model_dump(),
                    "checkpoint_id": checkpoint_key("", evil["id"]),
                    "state": state,
                }
            ),
        )
        with pytest.raises(ValidationError):
            await saver.aget_tuple(_config(thread, evil["id"]))
        assert EXECUTED == []
        with pytest.raises(ValidationError):
            await saver.aput(_config(thread), _checkpoint(bad=object()), META, {})


async def test_list_without_namespace_spans_namespaces(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        ids = []
        for ns in ("", "child:1", "", "child:2"):
            checkpoint = _checkpoint()
            config = _config(thread)
            config["configurable"]["checkpoint_ns"] = ns
            await saver.aput(config, checkpoint, META, {})
            ids.append(checkpoint["id"])
        everything: RunnableConfig = {"configurable": {"thread_id": thread}}
        assert [t.checkpoint["id"] async for t in saver.alist(everything)] == ids[::-1]
        before = _config(thread, ids[2])
        assert [t.checkpoint["id"] async for t in saver.alist(everything, before=before)] == [
            ids[1],
            ids[0],
        ]
        with pytest.raises(ValidationError):
            await saver.aput(
                _config(thread, **{"checkpoint_ns": "a\x1fb"}), _checkpoint(), META, {}
            )
        with pytest.raises(ValidationError):
            [t async for t in saver.alist(None)]


async def test_sync_api_from_another_thread(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        checkpoint = _checkpoint(x=1)

        def work() -> list[str]:
            stored = saver.put(_config(thread), checkpoint, META, {})
            saver.put_writes(stored, [("x", 2)], "t1")
            tup = saver.get_tuple(stored)
            assert tup is not None and tup.pending_writes == [("t1", "x", 2)]
            return [t.checkpoint["id"] for t in saver.list(_config(thread), limit=5)]

        assert await asyncio.to_thread(work) == [checkpoint["id"]]
        with pytest.raises(asyncio.InvalidStateError):  # an EventLoopError
            saver.get_tuple(_config(thread))


def _run(run_id: str) -> CheckpointMetadata:
    return {"source": "loop", "step": 0, "run_id": run_id}


async def _runs_of(saver: HelixCheckpointSaver, thread: str) -> list[str]:
    everything: RunnableConfig = {"configurable": {"thread_id": thread}}
    return sorted([str(t.metadata.get("run_id")) async for t in saver.alist(everything)])


async def test_delete_for_runs_deletes_one_run_on_every_thread(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        keep, drop = str(uuid.uuid4()), str(uuid.uuid4())
        threads = [str(uuid.uuid4()), str(uuid.uuid4())]
        firsts: dict[str, RunnableConfig] = {}
        seconds: dict[str, RunnableConfig] = {}
        for thread in threads:
            first = await saver.aput(_config(thread), _checkpoint(), _run(keep), {})
            sub = _config(thread, checkpoint_ns="child:1")
            await saver.aput(sub, _checkpoint(), _run(drop), {})
            parent = first["configurable"]["checkpoint_id"]
            second = await saver.aput(_config(thread, parent), _checkpoint(), _run(drop), {})
            await saver.aput_writes(second, [("ch", "dropped")], "task-d")
            await saver.aput_writes(first, [("ch", "kept")], "task-k")
            firsts[thread], seconds[thread] = first, second
        copy = f"copy-{threads[0]}"
        await saver.acopy_thread(threads[0], copy)
        assert await _runs_of(saver, copy) == sorted([drop, drop, keep])

        await saver.adelete_for_runs([drop, str(uuid.uuid4())])

        for thread in [*threads, copy]:
            assert await _runs_of(saver, thread) == [keep]
            [kept] = [t async for t in saver.alist(_config(thread))]
            assert kept.pending_writes == [("task-k", "ch", "kept")]
            writes = await store.page_checkpoints(thread, prefix="w\x1f")
            assert [w.state["task"] for w in writes if isinstance(w.state, dict)] == ["task-k"]
        for thread in threads:
            assert await saver.aget_tuple(seconds[thread]) is None
            # The deleted child's claim went with it: its parent can be extended again,
            # and nothing brings the deleted child back.
            parent = firsts[thread]["configurable"]["checkpoint_id"]
            await saver.aput(_config(thread, parent), _checkpoint(), _run(keep), {})
            assert await saver.aget_tuple(seconds[thread]) is None
        entries = await store.page_checkpoints(RUN_INDEX, prefix="r\x1f")
        assert len(entries) == 5  # two threads, the copy, two new children
        assert all(isinstance(e.state, dict) and e.state["run"] == keep for e in entries)
        with pytest.raises(ValidationError):
            await saver.aput(_config(RUN_INDEX), _checkpoint(), META, {})


async def test_delete_for_runs_leaves_the_claim_of_the_run_that_won(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread, winner, loser = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
        root = (await saver.aput(_config(thread), _checkpoint(), META, {}))["configurable"]
        await saver.aput(_config(thread, root["checkpoint_id"]), _checkpoint(), _run(winner), {})
        with pytest.raises(StaleCheckpointError):  # indexed, then refused
            await saver.aput(_config(thread, root["checkpoint_id"]), _checkpoint(), _run(loser), {})
        await saver.adelete_for_runs([loser])
        assert await _runs_of(saver, thread) == sorted(["None", winner])
        with pytest.raises(StaleCheckpointError):
            await saver.aput(_config(thread, root["checkpoint_id"]), _checkpoint(), _run(loser), {})


async def test_puts_racing_delete_for_runs_leave_nothing_of_the_run(backend: Backend) -> None:
    async with backend.open() as a, backend.open() as b:
        writer, deleter = HelixCheckpointSaver(a), HelixCheckpointSaver(b)
        threads = [str(uuid.uuid4()) for _ in range(3)]
        keep = str(uuid.uuid4())
        for thread in threads:
            await writer.aput(_config(thread), _checkpoint(), _run(keep), {})
        overlapped = 0
        for round_ in range(6):
            run = str(uuid.uuid4())
            done: list[str] = []

            async def chain(thread: str, run: str = run, done: list[str] = done) -> None:
                parent: str | None = None
                for _ in range(4):
                    stored = await writer.aput(
                        _config(thread, parent), _checkpoint(), _run(run), {}
                    )
                    parent = stored["configurable"]["checkpoint_id"]
                    await asyncio.sleep(0)
                done.append(thread)

            async def delete(run: str = run, delay: int = round_, done: list[str] = done) -> bool:
                for _ in range(delay * 3):
                    await asyncio.sleep(0)
                during = len(done) < len(threads)
                await deleter.adelete_for_runs([run])
                return during and len(done) < len(threads)

            outcomes = await asyncio.gather(*(chain(t) for t in threads), delete())
            overlapped += outcomes[-1] is True
            for thread in threads:
                assert await _runs_of(writer, thread) == [keep]
            assert await a.page_checkpoints(RUN_INDEX, prefix="r\x1f") != []
        assert overlapped > 0  # some deletes ran while the run was still writing
