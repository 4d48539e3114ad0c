"""A put or put_writes racing delete_thread lands in the thread, whole, or is deleted with it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import pytest
from langchain_core.runnables import RunnableConfig

from helix_agents.core import Checkpoint, SessionStateStore
from helix_agents.core.errors import StaleCheckpointError
from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.langgraph._layout import ALL_CHECKPOINTS, ALL_CLAIMS, checkpoint_key, claim_key
from helix_agents.store_memory import MemoryStateStore

from .test_run_index import _indexed, _live
from .test_saver import META, Backend, _checkpoint, _config, _run

pytestmark = pytest.mark.anyio


async def _unclaimed(store: SessionStateStore, thread: str) -> list[str]:
    """Checkpoints of ``thread`` with a parent whose claim does not name them."""
    found = []
    for record in await store.page_checkpoints(thread, prefix=ALL_CHECKPOINTS):
        state = record.state
        assert isinstance(state, dict)
        if state["parent"] is None:
            continue
        [claim] = await store.page_checkpoints(thread, prefix=claim_key("", str(state["parent"])))
        if not isinstance(claim.state, dict) or claim.state["id"] != state["id"]:
            found.append(str(state["id"]))
    return found


class DeletesBeforeClaimRead(MemoryStateStore):
    """A memory store that runs ``before`` once, just before the next claim is read."""

    before: Callable[[], Awaitable[object]] | None = None

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """Run ``before`` first when reading a claim."""
        if self.before is not None and checkpoint_id.startswith(ALL_CLAIMS):
            before, self.before = self.before, None
            await before()
        return await super().get_checkpoint(session_id, checkpoint_id)


async def test_a_claim_read_after_delete_thread_lands_after_prune_refuses() -> None:
    async with DeletesBeforeClaimRead() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        root = (await saver.aput(_config(thread), _checkpoint(), META, {}))["configurable"]
        parent = root["checkpoint_id"]
        first = await saver.aput(_config(thread, parent), _checkpoint(n=1), META, {})
        # The thread is deleted between the late put's claim insert and its read.
        store.before = lambda: saver.adelete_thread(thread)
        late = await saver.aput(_config(thread, parent), _checkpoint(n=2), META, {})
        assert await saver.aget_tuple(first) is None
        found = await saver.aget_tuple(_config(thread))
        assert found is not None and found.config == late
        assert await _unclaimed(store, thread) == []
        # A claim pruned while its parent stays: another writer held it, so refuse.
        child = _checkpoint(n=3)
        await saver.aput(late, child, META, {})
        await store.delete_checkpoints(thread, [checkpoint_key("", child["id"])])  # a crash
        claim = claim_key("", late["configurable"]["checkpoint_id"])
        store.before = lambda: store.delete_checkpoints(thread, [claim])
        with pytest.raises(StaleCheckpointError):
            await saver.aput(late, _checkpoint(n=4), META, {})
        found = await saver.aget_tuple(_config(thread))
        assert found is not None and found.config == late


async def test_a_put_after_delete_thread_lands_as_on_langgraphs_savers(backend: Backend) -> None:
    async with backend.open() as store:
        saver = HelixCheckpointSaver(store)
        thread = str(uuid.uuid4())
        root = (await saver.aput(_config(thread), _checkpoint(), META, {}))["configurable"]
        await saver.adelete_thread(thread)
        await saver.aput_writes(_config(thread, root["checkpoint_id"]), [("ch", 1)], "task")
        child = await saver.aput(_config(thread, root["checkpoint_id"]), _checkpoint(n=1), META, {})
        await saver.aput_writes(child, [("ch", 2)], "task")
        found = await saver.aget_tuple(_config(thread))
        assert found is not None and found.config == child
        assert found.parent_config == _config(thread, root["checkpoint_id"])
        assert found.checkpoint["channel_values"] == {"n": 1}
        assert found.pending_writes == [("task", "ch", 2)]
        # One child per parent still holds for the deleted parent.
        with pytest.raises(StaleCheckpointError):
            await saver.aput(_config(thread, root["checkpoint_id"]), _checkpoint(), META, {})


async def test_puts_racing_delete_thread_land_whole_or_not_at_all(backend: Backend) -> None:
    async with backend.open() as a, backend.open() as b:
        writer, deleter = HelixCheckpointSaver(a), HelixCheckpointSaver(b)
        threads = [str(uuid.uuid4()) for _ in range(3)]
        run = str(uuid.uuid4())
        all_started, deleting, deletes_done = asyncio.Event(), asyncio.Event(), asyncio.Event()
        after: dict[str, list[RunnableConfig]] = {t: [] for t in threads}
        started: set[str] = set()
        overlapped = 0

        async def chain(thread: str) -> None:
            nonlocal overlapped
            parent: str | None = None
            step = 0
            while len(after[thread]) < 2:  # until two puts begun after the last delete landed
                step += 1
                late = deletes_done.is_set()
                checkpoint = _checkpoint(step=step)
                for _ in range(2):  # each put retried once
                    stored = await writer.aput(_config(thread, parent), checkpoint, _run(run), {})
                    await writer.aput_writes(stored, [("ch", step)], "task")
                    await asyncio.sleep(0)
                overlapped += deleting.is_set() and not late  # this put overlapped the deletes
                if late:
                    after[thread].append(stored)
                parent = stored["configurable"]["checkpoint_id"]
                started.add(thread)
                if len(started) == len(threads):
                    all_started.set()

        async def delete() -> None:
            await all_started.wait()  # every thread has a checkpoint to lose
            deleting.set()
            for _ in range(8):
                await asyncio.gather(*(deleter.adelete_thread(t) for t in threads))
                await asyncio.sleep(0)
            deletes_done.set()

        await asyncio.gather(*(chain(t) for t in threads), delete())
        assert overlapped > 0  # some puts ran while the threads were being deleted
        for thread in threads:
            for stored in after[thread]:
                found = await writer.aget_tuple(stored)
                assert found is not None and found.pending_writes
            assert await _unclaimed(a, thread) == []  # no checkpoint outside its claim
            assert set(await _live(writer, thread)) <= set(await _indexed(a, thread))
        await writer.adelete_for_runs([run])
        for thread in threads:
            assert await _live(writer, thread) == []
