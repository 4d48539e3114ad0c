"""The run index follows delete_thread and prune: no entry outlives its checkpoint."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langchain_core.runnables import RunnableConfig

from helix_agents.core import SessionStateStore
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE
from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.langgraph._runs import RUN_INDEX

from .test_saver import META, Backend, _checkpoint, _config, _run

pytestmark = pytest.mark.anyio


async def _indexed(store: SessionStateStore, thread: str) -> list[str]:
    """The checkpoint ids the index holds for ``thread`` (entries, not deleted marks)."""
    entries = await store.page_checkpoints(RUN_INDEX, prefix="r\x1f", limit=MAX_CHECKPOINT_PAGE)
    assert len(entries) < MAX_CHECKPOINT_PAGE
    return sorted(
        str(e.state["id"])
        for e in entries
        if isinstance(e.state, dict) and e.state["thread"] == thread
    )


async def _live(saver: HelixCheckpointSaver, thread: str) -> list[str]:
    """The ids of the thread's checkpoints that carry a run."""
    everything: RunnableConfig = {"configurable": {"thread_id": thread}}
    return sorted(
        [t.checkpoint["id"] async for t in saver.alist(everything) if t.metadata.get("run_id")]
    )


async def _fill(saver: HelixCheckpointSaver, thread: str, run: str) -> list[str]:
    """Three checkpoints of ``run`` in the root namespace and two in a subgraph's, one
    without a run first, each with a write; the newest of each namespace last."""
    await saver.aput(_config(thread), _checkpoint(), META, {})
    newest = []
    for ns, count in (("", 3), ("child:1", 2)):
        parent: str | None = None
        for _ in range(count):
            config = _config(thread, parent, checkpoint_ns=ns, **{"helix_fork": parent is None})
            stored = await saver.aput(config, _checkpoint(), _run(run), {})
            await saver.aput_writes(stored, [("ch", "w")], "task")
            parent = stored["configurable"]["checkpoint_id"]
        assert parent is not None
        newest.append(parent)
    return sorted(newest)


async def test_delete_thread_and_prune_drop_the_threads_entries(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        run, gone_run = str(uuid.uuid4()), str(uuid.uuid4())
        pruned, deleted, dropped, other = (str(uuid.uuid4()) for _ in range(4))
        newest = await _fill(saver, pruned, run)
        for thread in (deleted, dropped, other):
            await _fill(saver, thread, run)
        await saver.aput(_config(deleted), _checkpoint(), _run(gone_run), {})
        await saver.adelete_for_runs([gone_run])
        copy = f"copy-{other}"
        await saver.acopy_thread(other, copy)
        assert len(await _indexed(store, copy)) == 5
        before = await _indexed(store, other)
        assert before == await _live(saver, other) and len(before) == 5

        await saver.aprune([pruned])
        assert await _indexed(store, pruned) == newest == await _live(saver, pruned)
        await saver.adelete_thread(deleted)
        await saver.adelete_thread(copy)
        await saver.aprune([dropped], strategy="delete")
        for thread in (deleted, copy, dropped):
            assert await _indexed(store, thread) == []
        assert await _indexed(store, other) == before
        assert await _indexed(store, pruned) == newest
        # The deleted mark stays: a late put of the deleted run still removes itself.
        late = await saver.aput(_config(deleted), _checkpoint(), _run(gone_run), {})
        assert await saver.aget_tuple(late) is None
        await saver.adelete_for_runs([run])
        for thread in (pruned, other):
            assert await _live(saver, thread) == []


async def test_puts_racing_delete_thread_stay_indexed(backend: Backend) -> None:
    async with backend.open() as a, backend.open() as b:
        writer, deleter = HelixCheckpointSaver(a), HelixCheckpointSaver(b)
        overlapped = 0
        for round_ in range(6):
            run = str(uuid.uuid4())
            threads = [str(uuid.uuid4()) for _ in range(3)]
            done: list[str] = []

            async def chain(thread: str, run: str = run, done: list[str] = done) -> None:
                parent: str | None = None
                for _ in range(4):  # a put racing delete_thread lands: never an error
                    checkpoint = _checkpoint()
                    for _ in range(2):  # each put retried once
                        stored = await writer.aput(
                            _config(thread, parent), checkpoint, _run(run), {}
                        )
                        await asyncio.sleep(0)
                    parent = stored["configurable"]["checkpoint_id"]
                done.append(thread)

            async def delete(
                delay: int = round_, threads: list[str] = threads, done: list[str] = done
            ) -> bool:
                for _ in range(delay * 3):
                    await asyncio.sleep(0)
                during = len(done) < len(threads)
                await asyncio.gather(*(deleter.adelete_thread(t) for t in threads))
                return during and len(done) < len(threads)

            outcomes = await asyncio.gather(*(chain(t) for t in threads), delete())
            overlapped += outcomes[-1] is True
            for thread in threads:
                # Over-reporting is allowed; missing a live checkpoint is not.
                assert set(await _live(writer, thread)) <= set(await _indexed(a, thread))
            await writer.adelete_for_runs([run])
            for thread in threads:
                assert await _live(writer, thread) == []
                await deleter.adelete_thread(thread)
                assert await _indexed(b, thread) == []
        assert overlapped > 0  # some deletes ran while the threads were still written
