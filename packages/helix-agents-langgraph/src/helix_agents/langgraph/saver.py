"""``HelixCheckpointSaver``: LangGraph's checkpointer over any helix-agents session store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator, Sequence
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.base import Checkpoint as GraphCheckpoint
from pydantic import JsonValue

from helix_agents.core import SessionNotFoundError, SessionStateStore, ValidationError
from helix_agents.core.errors import StaleCheckpointError
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

from ._layout import (
    ALL_CHECKPOINTS,
    ALL_CLAIMS,
    ALL_WRITES,
    checkpoint_key,
    claim_key,
    namespace_prefix,
    write_key,
    writes_prefix,
)
from ._runs import Entry, RunIndex, check_thread
from ._threads import ATTEMPTS, Threads, deleted_under
from ._values import JsonValues, strict_serializer

__all__ = ["FORK", "HelixCheckpointSaver"]

FORK = "helix_fork"
"""A ``configurable`` key: true lets a put branch from a checkpoint that already has a child."""

_T = TypeVar("_T")
_WRITES_AT_ONCE = 10
_PendingWrite = tuple[str, str, Any]


class HelixCheckpointSaver(BaseCheckpointSaver[int]):
    """Persists LangGraph threads in ``store`` (memory, SQLite, Postgres, Redis, …).

    Each thread is the store's session of the same id, created on its first
    checkpoint. Values are stored as JSON (see :mod:`helix_agents.langgraph._values`);
    ``allowed_modules`` lists further ``(module, class)`` pairs that loading may
    rebuild. A put that extends a parent which another writer already extended
    raises :class:`~helix_agents.core.errors.StaleCheckpointError`, unless its config
    sets ``configurable[FORK]``. The ``a*`` methods run on the store's event
    loop; the sync ones may be called from any other thread while it runs.
    """

    def __init__(
        self, store: SessionStateStore, *, allowed_modules: Iterable[tuple[str, ...]] = ()
    ) -> None:
        serde = strict_serializer(allowed_modules)
        super().__init__(serde=serde)
        self.store = store
        self._values = JsonValues(serde)
        self._threads = Threads(store)
        self._runs = RunIndex(self._threads)
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    # Reads

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint the config names, or the namespace's latest; ``None`` if none."""
        self._bind()
        thread, ns = _thread(config), _namespace(config)
        checkpoint_id = get_checkpoint_id(config)
        state: JsonValue | None
        if checkpoint_id is not None:
            state = await self._threads.get(thread, checkpoint_key(ns, checkpoint_id))
        else:
            page = await self._threads.page(thread, namespace_prefix(ns), None, 1)
            state = page[0].state if page else None
        return None if state is None else await self._tuple(thread, state)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """A thread's checkpoints, newest first; ``filter`` matches metadata keys exactly."""
        self._bind()
        if config is None:
            raise ValidationError("list needs a config with a thread_id (threads are sessions)")
        thread = _thread(config)
        before_id = None if before is None else get_checkpoint_id(before)
        if limit is not None and limit <= 0:
            return
        left = limit
        async for page in self._pages(config, thread, before_id, limit, filter):
            if filter:
                page = [
                    s for s in page if _matches(self._values.load(_field(s, "metadata")), filter)
                ]
            if left is not None:
                page = page[:left]
                left -= len(page)
            # The writes of a page's checkpoints are read together, a few at a time.
            for start in range(0, len(page), _WRITES_AT_ONCE):
                chunk = page[start : start + _WRITES_AT_ONCE]
                for found in await asyncio.gather(*(self._tuple(thread, s) for s in chunk)):
                    yield found
            if left == 0:
                return

    async def _pages(
        self,
        config: RunnableConfig,
        thread: str,
        before_id: str | None,
        limit: int | None,
        filter: dict[str, Any] | None,
    ) -> AsyncIterator[list[JsonValue]]:
        ns = config["configurable"].get("checkpoint_ns")
        if ns is None:
            # Every namespace: no single prefix orders them by checkpoint id, so sort here.
            found = [r.state async for r in self._threads.walk(thread, ALL_CHECKPOINTS)]
            found.sort(key=lambda s: str(_field(s, "id")), reverse=True)
            yield [s for s in found if before_id is None or str(_field(s, "id")) < before_id]
            return
        prefix = namespace_prefix(ns)
        cursor = None if before_id is None else checkpoint_key(ns, before_id)
        size = MAX_CHECKPOINT_PAGE if filter or limit is None else min(limit, MAX_CHECKPOINT_PAGE)
        while True:
            page = await self._threads.page(thread, prefix, cursor, size)
            yield [record.state for record in page]
            if len(page) < size:
                return
            cursor = page[-1].checkpoint_id

    async def _tuple(self, thread: str, state: JsonValue) -> CheckpointTuple:
        ns, checkpoint_id = str(_field(state, "ns")), str(_field(state, "id"))
        parent = _field(state, "parent")
        checkpoint = cast(dict[str, Any], self._values.load(_field(state, "checkpoint")))
        values = cast(dict[str, JsonValue], _field(state, "values"))
        checkpoint["channel_values"] = {k: self._values.load(v) for k, v in values.items()}
        metadata = cast(CheckpointMetadata, self._values.load(_field(state, "metadata")))
        return CheckpointTuple(
            config=_config(thread, ns, checkpoint_id),
            checkpoint=cast(GraphCheckpoint, checkpoint),
            metadata=metadata,
            parent_config=None if parent is None else _config(thread, ns, str(parent)),
            pending_writes=await self._pending_writes(thread, ns, checkpoint_id),
        )

    async def _pending_writes(
        self, thread: str, ns: str, checkpoint_id: str
    ) -> list[_PendingWrite]:
        found = [
            r.state async for r in self._threads.walk(thread, writes_prefix(ns, checkpoint_id))
        ]
        # LangGraph replays a step's writes in (task_path, task_id, idx) order.
        found.sort(key=lambda s: (_field(s, "path"), _field(s, "task"), _field(s, "idx")))
        return [
            (
                str(_field(s, "task")),
                str(_field(s, "channel")),
                self._values.load(_field(s, "value")),
            )
            for s in found
        ]

    # Writes

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: GraphCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; its parent is the ``checkpoint_id`` of ``config``.

        Raises :class:`StaleCheckpointError` if another checkpoint already
        extends that parent (another writer got there first), unless
        ``configurable[FORK]`` is true.
        """
        self._bind()
        thread, ns = _thread(config), _namespace(config)
        checkpoint_id = checkpoint["id"]
        parent = config["configurable"].get("checkpoint_id")
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        metadata = get_serializable_checkpoint_metadata(config, metadata)
        state: JsonValue = {
            "ns": ns,
            "id": checkpoint_id,
            "parent": parent,
            "checkpoint": self._values.dump(rest),
            "values": {k: self._values.dump(v) for k, v in checkpoint["channel_values"].items()},
            "metadata": self._values.dump(metadata),
        }
        run = _run_of(metadata)
        entry = None if run is None else Entry(run, thread, ns, checkpoint_id, parent)
        # Indexed first: a put that dies after it leaves an extra entry.
        fresh = entry is None or await self._runs.add(entry)
        if parent and not config["configurable"].get(FORK):
            await self._claim_and_save(thread, ns, parent, checkpoint_id, state)
        else:
            await self._threads.save(thread, checkpoint_key(ns, checkpoint_id), state)
        if entry is not None and await self._runs.deleted(entry.run):
            # delete_for_runs of this run ran beside this put and may have missed it.
            await self._runs.remove(thread, ns, checkpoint_id, parent)
        elif entry is not None and not fresh:
            # A retry: delete_thread or prune may have dropped the entry since it was saved.
            await self._runs.add(entry)
        return _config(thread, ns, checkpoint_id)

    async def _claim_and_save(
        self, thread: str, ns: str, parent: str, checkpoint_id: str, state: JsonValue
    ) -> None:
        """Claim ``parent`` for this checkpoint, then save it, in one life of the thread.

        A ``delete_thread`` (or ``prune``) that deletes the claim before the
        checkpoint lands makes the put start over: the parent is gone, so the
        put lands as if it came after the delete (docs/integrations/langgraph.md,
        "A put racing delete_thread").
        """
        for _ in range(ATTEMPTS):
            if not await self._claim(thread, ns, parent, checkpoint_id, state):
                continue
            try:
                await self._threads.save(
                    thread, checkpoint_key(ns, checkpoint_id), state, create=False
                )
            except SessionNotFoundError:
                continue  # the thread, claim included, was deleted: claim again
            return
        raise deleted_under(thread)

    async def _claim(
        self, thread: str, ns: str, parent: str, checkpoint_id: str, state: JsonValue
    ) -> bool:
        """Make this checkpoint the one child of ``parent``, or raise StaleCheckpointError.

        ``False`` if the claim and ``parent`` were deleted (``delete_thread``,
        or ``prune`` of the parent) before the claim could be read: claim again.
        """
        key = claim_key(ns, parent)
        if await self._threads.save(thread, key, state):
            return True
        held = await self._threads.get(thread, key)
        if held is None:
            if await self._threads.get(thread, checkpoint_key(ns, parent)) is None:
                return False
            # A live parent whose claim was pruned: another writer held it, so refuse.
            raise StaleCheckpointError(
                f"thread {thread!r}: the claim on checkpoint {parent!r} was pruned while "
                "another writer held it; reload the thread and retry",
                session_id=thread,
                parent_id=parent,
            )
        winner = str(_field(held, "id"))
        if winner == checkpoint_id:
            return True  # this same put, retried
        # The winner's claim carries its whole record: finish its put if it stopped halfway.
        try:
            finished = await self._threads.save(
                thread, checkpoint_key(ns, winner), held, create=False
            )
        except SessionNotFoundError:
            return False  # the thread was deleted, the winner with it
        entry = self._entry(thread, held)
        if entry is not None and await self._runs.deleted(entry.run):
            await self._runs.remove(thread, ns, winner, parent)
        elif entry is not None and finished:  # delete_thread or prune may have dropped it
            await self._runs.add(entry)
        raise StaleCheckpointError(
            f"thread {thread!r}: checkpoint {parent!r} (namespace {ns!r}) was already "
            f"extended by {winner!r}; reload the thread and retry",
            session_id=thread,
            parent_id=parent,
            child_id=winner,
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes against the config's checkpoint.

        Ordinary writes are insert-once by ``(task_id, idx)``; the special
        channels (errors, interrupts, …) replace what the task wrote before.
        """
        self._bind()
        thread, ns = _thread(config), _namespace(config)
        checkpoint_id = str(config["configurable"]["checkpoint_id"])
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            key = write_key(ns, checkpoint_id, task_id, idx)
            state: JsonValue = {
                "task": task_id,
                "path": task_path,
                "idx": idx,
                "channel": channel,
                "value": self._values.dump(value),
            }
            if idx < 0:
                await self._threads.delete(thread, [key])
            await self._threads.save(thread, key, state)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread: its session and everything in it, then its run index entries."""
        self._bind()
        await self._delete_thread(check_thread(thread_id))

    async def _delete_thread(self, thread: str) -> None:
        gone = [
            entry
            async for record in self._threads.walk(thread, ALL_CHECKPOINTS)
            if (entry := self._entry(thread, record.state)) is not None
        ]
        await self.store.delete_session(thread)
        await self._forget(thread, gone)

    async def _forget(self, thread: str, gone: Sequence[Entry]) -> None:
        """Drop the index entries of ``gone``, checkpoints of ``thread`` just deleted.

        A put racing the delete may have saved one of them again (a retry, or
        a claim's checkpoint finished by the next writer): its entry is added
        back (docs/integrations/langgraph.md, "Deleting runs").
        """
        if not gone:
            return
        await self._runs.forget(gone)
        dropped = set(gone)
        async for record in self._threads.walk(thread, ALL_CHECKPOINTS):
            entry = self._entry(thread, record.state)
            if entry in dropped:
                await self._runs.add(entry)

    def _entry(self, thread: str, state: JsonValue) -> Entry | None:
        """The index entry of a checkpoint record of ``thread``; ``None`` without a run."""
        run = _run_of(self._values.load(_field(state, "metadata")))
        if run is None:
            return None
        parent = _field(state, "parent")
        return Entry(
            run,
            thread,
            str(_field(state, "ns")),
            str(_field(state, "id")),
            None if parent is None else str(parent),
        )

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete every checkpoint whose metadata ``run_id`` is one of ``run_ids``, in
        every thread and namespace, with its pending writes.

        A run's checkpoints are found through the run index (one page per
        ``MAX_CHECKPOINT_PAGE`` of them), never by scanning threads.
        """
        self._bind()
        await self._runs.delete([str(run) for run in run_ids])

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread into a new thread.

        The target must not exist (:class:`~helix_agents.core.SessionExistsError`);
        a missing source copies nothing.
        """
        self._bind()
        source, target = check_thread(source_thread_id), check_thread(target_thread_id)
        runs: set[str] = set()
        # The copies carry their runs' ids: index them before they exist.
        async for record in self._threads.walk(source, ALL_CHECKPOINTS):
            entry = self._entry(target, record.state)
            if entry is not None:
                runs.add(entry.run)
                await self._runs.add(entry)
        try:
            await self.store.clone_session(source, target)
        except SessionNotFoundError as exc:
            if exc.session_id != source:
                raise
        dead = [run for run in sorted(runs) if await self._runs.deleted(run)]
        if dead:  # deleted while being copied: the copy may hold what the delete missed
            await self._runs.delete(dead)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's newest checkpoint and its writes;
        ``"delete"``: delete the threads."""
        self._bind()
        if strategy not in ("keep_latest", "delete"):
            raise ValidationError(f"unknown prune strategy {strategy!r}: keep_latest or delete")
        for thread in map(check_thread, thread_ids):
            if strategy == "delete":
                await self._delete_thread(thread)
            else:
                await self._keep_latest(thread)

    async def _keep_latest(self, thread: str) -> None:
        kept: dict[str, str] = {}
        doomed: list[str] = []
        gone: list[Entry] = []
        async for record in self._threads.walk(thread, ALL_CHECKPOINTS):
            ns = str(_field(record.state, "ns"))
            if ns in kept:  # greatest key first: the first of a namespace is its newest
                doomed.append(record.checkpoint_id)
                if (entry := self._entry(thread, record.state)) is not None:
                    gone.append(entry)
            else:
                kept[ns] = str(_field(record.state, "id"))
        keep_writes = tuple(writes_prefix(ns, cid) for ns, cid in kept.items())
        doomed += [r.checkpoint_id async for r in self._threads.walk(thread, ALL_CLAIMS)]
        doomed += [
            r.checkpoint_id
            async for r in self._threads.walk(thread, ALL_WRITES)
            if not r.checkpoint_id.startswith(keep_writes)
        ]
        await self._threads.delete(thread, doomed)
        await self._forget(thread, gone)

    # The sync API: the same calls, run on the store's event loop.

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple`."""
        return self._sync(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync :meth:`alist` (the page is read whole, then iterated)."""
        found = self.alist(config, filter=filter, before=before, limit=limit)
        return iter(self._sync(_collect(found)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: GraphCheckpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync :meth:`aput`."""
        return self._sync(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync :meth:`aput_writes`."""
        self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread`."""
        self._sync(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync :meth:`adelete_for_runs`."""
        self._sync(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync :meth:`acopy_thread`."""
        self._sync(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Sync :meth:`aprune`."""
        self._sync(self.aprune(thread_ids, strategy=strategy))

    def _bind(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()

    def _sync(self, call: Coroutine[Any, Any, _T]) -> _T:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self._loop is None or running is self._loop:
            call.close()
            raise asyncio.InvalidStateError(
                "HelixCheckpointSaver's sync methods run the store's calls on its event loop "
                "from another thread; on that loop, use the async API (ainvoke, astream)"
            )
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()


async def _collect(found: AsyncIterator[CheckpointTuple]) -> list[CheckpointTuple]:
    return [item async for item in found]


def _thread(config: RunnableConfig) -> str:
    try:
        return check_thread(str(config["configurable"]["thread_id"]))
    except KeyError:
        raise ValidationError("the config names no configurable thread_id") from None


def _run_of(metadata: Any) -> str | None:
    run = metadata.get("run_id") if isinstance(metadata, dict) else None
    return None if run is None else str(run)


def _namespace(config: RunnableConfig) -> str:
    return str(config["configurable"].get("checkpoint_ns", ""))


def _config(thread: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
    }


def _field(state: JsonValue, name: str) -> JsonValue:
    if not isinstance(state, dict) or name not in state:
        raise ValidationError(f"not a LangGraph record (no {name!r}): {str(state)[:80]!r}")
    return state[name]


def _matches(metadata: Any, filter: dict[str, Any]) -> bool:
    return isinstance(metadata, dict) and all(
        k in metadata and metadata[k] == v for k, v in filter.items()
    )
