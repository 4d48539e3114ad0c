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
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.base import Checkpoint as GraphCheckpoint
from pydantic import JsonValue

from helix_agents.core import (
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.errors import StaleCheckpointError
from helix_agents.core.inputs import check_id
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

from ._config import checkpoint_id_of, config_for, namespace_of, thread_of
from ._fence import fence_of, removals_of
from ._late import record_late_answers
from ._layout import (
    ALL_CHECKPOINTS,
    ALL_CLAIMS,
    ALL_WRITES,
    checkpoint_key,
    claim_key,
    namespace_prefix,
    parse_checkpoint_key,
    parse_claim_key,
    parse_write_key,
    write_key,
    writes_prefix,
)
from ._loops import run_on
from ._recent import RecentValues
from ._records import Records, StoredCheckpoint
from ._runs import Entry, RunIndex, check_thread
from ._threads import ATTEMPTS, Threads, deleted_under
from ._values import JsonValues, strict_serializer
from .errors import CorruptRecordError

__all__ = ["FORK", "HelixCheckpointSaver"]

FORK = "helix_fork"
"""A ``configurable`` key: true lets a put branch from a checkpoint that already has a child."""

_T = TypeVar("_T")
_WRITES_AT_ONCE = 10
_PendingWrite = tuple[str, str, Any]


class HelixCheckpointSaver(BaseCheckpointSaver[int]):
    """Persists LangGraph threads in ``store`` (memory, SQLite, Postgres, Redis, …).

    Each thread is the store's session of the same id, created on its first
    checkpoint with the ``langgraph`` mark; a session another adapter marked is
    not there for reads and refuses writes with ``ForeignSessionError``
    (docs/integrations/sharing.md). Values are stored as JSON that comes back
    exactly, or refused with :class:`~helix_agents.langgraph.errors.UnstorableValueError`
    before anything is written (see :mod:`helix_agents.langgraph._values`);
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
        self._records = Records(JsonValues(serde))
        self._threads = Threads(store)
        self._runs = RunIndex(self._threads)
        self._recent = RecentValues()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    # Reads

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint the config names, or the namespace's latest; ``None`` if none."""
        self._bind()
        thread, ns = thread_of(config), namespace_of(config) or ""
        checkpoint_id = checkpoint_id_of(config)
        found: tuple[str, JsonValue] | None
        if checkpoint_id is not None:
            key = checkpoint_key(ns, checkpoint_id)
            state = await self._threads.get(thread, key)
            found = None if state is None else (key, state)
        else:
            found = await self._latest(thread, ns)
        if found is None or not await self._threads.readable(thread):
            return None
        return await self._tuple(thread, self._records.checkpoint(thread, *found))

    async def _latest(self, thread: str, ns: str) -> tuple[str, JsonValue] | None:
        """The namespace's newest checkpoint record, skipping ids not of the layout (ADP-3)."""
        prefix, cursor = namespace_prefix(ns), None
        while True:
            page = await self._threads.page(thread, prefix, cursor, 1)
            if not page:
                return None
            if parse_checkpoint_key(page[0].checkpoint_id) is not None:
                return page[0].checkpoint_id, page[0].state
            cursor = page[0].checkpoint_id

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
        thread, ns = thread_of(config), namespace_of(config)
        before_id = None if before is None else checkpoint_id_of(before)
        if filter is not None and not isinstance(filter, dict):
            raise ValidationError(f"filter must be a dict, got {type(filter).__name__}")
        if limit is not None and (type(limit) is not int):
            raise ValidationError(f"limit must be an int, got {type(limit).__name__}")
        if (limit is not None and limit <= 0) or not await self._threads.readable(thread):
            return
        left = limit
        async for page in self._pages(thread, ns, before_id, limit, filter):
            found = [self._records.checkpoint(thread, key, state) for key, state in page]
            if filter:
                found = [c for c in found if _matches(c.metadata, filter)]
            if left is not None:
                found = found[:left]
                left -= len(found)
            # The writes of a page's checkpoints are read together, a few at a time.
            for start in range(0, len(found), _WRITES_AT_ONCE):
                chunk = found[start : start + _WRITES_AT_ONCE]
                for tup in await asyncio.gather(*(self._tuple(thread, c) for c in chunk)):
                    yield tup
            if left == 0:
                return

    async def _pages(
        self,
        thread: str,
        ns: str | None,
        before_id: str | None,
        limit: int | None,
        filter: dict[str, Any] | None,
    ) -> AsyncIterator[list[tuple[str, JsonValue]]]:
        """Pages of checkpoint records, newest first; ids not of the layout are skipped."""
        if ns is None:
            # Every namespace: no single prefix orders them by checkpoint id, so sort here.
            found = [
                (parsed[1], r.checkpoint_id, r.state)
                async for r in self._threads.walk(thread, ALL_CHECKPOINTS)
                if (parsed := parse_checkpoint_key(r.checkpoint_id)) is not None
            ]
            found.sort(key=lambda f: f[0], reverse=True)
            yield [(k, s) for cid, k, s in found if before_id is None or cid < before_id]
            return
        prefix = namespace_prefix(ns)
        cursor = None if before_id is None else checkpoint_key(ns, before_id)
        size = MAX_CHECKPOINT_PAGE if filter or limit is None else min(limit, MAX_CHECKPOINT_PAGE)
        while True:
            page = await self._threads.page(thread, prefix, cursor, size)
            yield [
                (r.checkpoint_id, r.state)
                for r in page
                if parse_checkpoint_key(r.checkpoint_id) is not None
            ]
            if len(page) < size:
                return
            cursor = page[-1].checkpoint_id

    async def _tuple(self, thread: str, found: StoredCheckpoint) -> CheckpointTuple:
        parent = found.parent
        return CheckpointTuple(
            config=config_for(thread, found.ns, found.id),
            checkpoint=cast(GraphCheckpoint, found.checkpoint),
            metadata=cast(CheckpointMetadata, found.metadata),
            parent_config=None if parent is None else config_for(thread, found.ns, parent),
            pending_writes=await self._pending_writes(thread, found.ns, found.id),
        )

    async def _pending_writes(
        self, thread: str, ns: str, checkpoint_id: str
    ) -> list[_PendingWrite]:
        prefix = writes_prefix(ns, checkpoint_id)
        found = [
            write
            async for r in self._threads.walk(thread, prefix)
            if (write := self._records.write(thread, r.checkpoint_id, r.state)) is not None
        ]
        # LangGraph replays a step's writes in (task_path, task_id, idx) order.
        found.sort(key=lambda w: (w.path, w.task, w.idx))
        return [(w.task, w.channel, w.value) for w in found]

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
        ``configurable[FORK]`` is true. The record is built, and refused if need
        be, before anything is written. A config that names a run
        (``configurable["helix_run_id"]``, :class:`HelixGraphRun`) writes only while
        that run is live: ``RunSupersededError`` otherwise, nothing written.
        """
        self._bind()
        thread, ns = thread_of(config), namespace_of(config) or ""
        parent = checkpoint_id_of(config)
        fence = fence_of(config)
        if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("id"), str):
            raise ValidationError(f"thread {thread!r}: not a checkpoint (no string id)")
        checkpoint_id = checkpoint["id"]
        key = checkpoint_key(ns, checkpoint_id)
        if parent:
            claim_key(ns, parent)  # refused here, not between writes
        try:
            metadata = get_serializable_checkpoint_metadata(config, metadata)
        except Exception as exc:  # LangGraph's merge of config metadata into metadata
            raise ValidationError(
                f"thread {thread!r}: unusable metadata ({type(exc).__name__})", session_id=thread
            ) from None
        state = self._records.checkpoint_state(
            thread, checkpoint_id, ns, parent, checkpoint, metadata
        )
        await self._threads.check_writable(thread)
        if removals_of(config) is not None:
            self._recent.note((thread, ns, checkpoint_id), checkpoint["channel_values"])
        run = _run_of(metadata)
        entry = None if run is None else Entry(run, thread, ns, checkpoint_id, parent)
        # Indexed first: a put that dies after it leaves an extra entry.
        fresh = entry is None or await self._runs.add(entry)
        if parent and not config["configurable"].get(FORK):
            await self._claim_and_save(thread, ns, parent, checkpoint_id, state, fence)
        else:
            await self._threads.save(thread, key, state, fence_run_id=fence)
        if entry is not None and await self._runs.deleted(entry.run):
            # delete_for_runs of this run ran beside this put and may have missed it.
            await self._runs.remove(thread, ns, checkpoint_id, parent)
        elif entry is not None and not fresh:
            # A retry: delete_thread or prune may have dropped the entry since it was saved.
            await self._runs.add(entry)
        return config_for(thread, ns, checkpoint_id)

    async def _claim_and_save(
        self,
        thread: str,
        ns: str,
        parent: str,
        checkpoint_id: str,
        state: JsonValue,
        fence: str | None,
    ) -> None:
        """Claim ``parent`` for this checkpoint, then save it, in one life of the thread.

        A ``delete_thread`` (or ``prune``) that deletes the claim before the
        checkpoint lands makes the put start over: the parent is gone, so the
        put lands as if it came after the delete (docs/integrations/langgraph.md,
        "A put racing delete_thread").
        """
        for _ in range(ATTEMPTS):
            if not await self._claim(thread, ns, parent, checkpoint_id, state, fence):
                continue
            # Unfenced: the claim was the fenced write, and a put whose claim landed completes.
            try:
                await self._threads.save(
                    thread, checkpoint_key(ns, checkpoint_id), state, create=False
                )
            except SessionNotFoundError:
                continue  # the thread, claim included, was deleted: claim again
            return
        raise deleted_under(thread)

    async def _claim(
        self,
        thread: str,
        ns: str,
        parent: str,
        checkpoint_id: str,
        state: JsonValue,
        fence: str | None,
    ) -> bool:
        """Make this checkpoint the one child of ``parent``, or raise StaleCheckpointError.

        ``False`` if the claim and ``parent`` were deleted (``delete_thread``,
        or ``prune`` of the parent) before the claim could be read: claim again.
        """
        key = claim_key(ns, parent)
        if await self._threads.save(thread, key, state, fence_run_id=fence):
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
        winner = _claimed(thread, key, ns, held)
        if winner == checkpoint_id:
            return True  # this same put, retried
        # The winner's claim carries its whole record: finish its put if it stopped halfway.
        try:
            finished = await self._threads.save(
                thread, checkpoint_key(ns, winner), held, create=False
            )
        except SessionNotFoundError:
            return False  # the thread was deleted, the winner with it
        entry = self._entry(thread, checkpoint_key(ns, winner), held)
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
        Every record is built, and refused if need be, before the first is written.
        Fenced like :meth:`aput`; the tool answers among writes a superseded run
        could not store are queued as the session's late answers. Under a
        ``HelixGraphRun`` the messages the writes remove are archived first (LGF-12).
        """
        self._bind()
        thread, ns = thread_of(config), namespace_of(config) or ""
        checkpoint_id = checkpoint_id_of(config)
        if not checkpoint_id:
            raise ValidationError(
                f"thread {thread!r}: put_writes needs the config's checkpoint_id",
                session_id=thread,
            )
        records: list[tuple[str, int, JsonValue]] = []
        for position, (channel, value) in enumerate(_pairs(thread, writes)):
            idx = WRITES_IDX_MAP.get(channel, position) if isinstance(channel, str) else position
            key = write_key(ns, checkpoint_id, task_id, idx)
            state = self._records.write_state(thread, task_id, task_path, idx, channel, value)
            records.append((key, idx, state))
        await self._threads.check_writable(thread)
        fence = fence_of(config)
        removals = removals_of(config)
        try:
            if removals is not None:
                await removals.archive_removed(
                    writes,
                    lambda: self._recent.values(
                        (thread, ns, checkpoint_id), lambda: self._channel_values(config)
                    ),
                )
            for key, idx, state in records:
                if idx < 0:
                    await self._threads.delete(thread, [key])
                await self._threads.save(thread, key, state, fence_run_id=fence)
        except RunSupersededError:
            # A tool's answer that outlived its run reaches the next run (LGF-4).
            await record_late_answers(self.store, thread, writes)
            raise

    async def _channel_values(self, config: RunnableConfig) -> dict[str, Any] | None:
        found = await self.aget_tuple(config)
        return None if found is None else dict(found.checkpoint["channel_values"])

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread: its session and everything in it, then its run index entries.

        A shared (unmarked) session is kept: only the saver's records go.
        """
        self._bind()
        thread = _thread_id(thread_id)
        await self._delete_thread(thread, await self._threads.check_writable(thread))

    async def _delete_thread(self, thread: str, shared: bool) -> None:
        gone = [
            entry
            async for record in self._threads.walk(thread, ALL_CHECKPOINTS)
            if (entry := self._entry(thread, record.checkpoint_id, record.state)) is not None
        ]
        if shared:  # the session is the application's too: only the saver's records go
            await self._threads.delete(thread, [k async for k in self._own_keys(thread)])
        else:
            await self.store.delete_session(thread)
        await self._forget(thread, gone)

    async def _own_keys(self, thread: str) -> AsyncIterator[str]:
        """The ids of the saver's records in the thread: its checkpoints, claims and writes."""
        for prefix, layout in (
            (ALL_CHECKPOINTS, parse_checkpoint_key),
            (ALL_CLAIMS, parse_claim_key),
            (ALL_WRITES, parse_write_key),
        ):
            async for record in self._threads.walk(thread, prefix):
                if layout(record.checkpoint_id) is not None:
                    yield record.checkpoint_id

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
            entry = self._entry(thread, record.checkpoint_id, record.state)
            if entry in dropped:
                await self._runs.add(entry)

    def _entry(self, thread: str, key: str, state: JsonValue) -> Entry | None:
        """The index entry of checkpoint record ``key`` of ``thread``; ``None`` without a run
        (or for a record no read could return)."""
        parsed = parse_checkpoint_key(key)
        found = None if parsed is None else self._records.run_of(state)
        if parsed is None or found is None:
            return None
        return Entry(found[0], thread, parsed[0], parsed[1], found[1])

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete every checkpoint whose metadata ``run_id`` is one of ``run_ids``, in
        every thread and namespace, with its pending writes.

        A run's checkpoints are found through the run index (one page per
        ``MAX_CHECKPOINT_PAGE`` of them), never by scanning threads; another
        adapter's session is skipped.
        """
        self._bind()
        if isinstance(run_ids, str | bytes):
            raise ValidationError("run_ids must be a sequence of run ids, not one string")
        await self._runs.delete([str(run) for run in run_ids])

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread into a new thread.

        The target must not exist (:class:`~helix_agents.core.SessionExistsError`);
        a missing source copies nothing. Another adapter's session, as source or
        target, raises ``ForeignSessionError``.
        """
        self._bind()
        source, target = _thread_id(source_thread_id), _thread_id(target_thread_id)
        await self._threads.check_writable(source)
        await self._threads.check_writable(target)
        runs: set[str] = set()
        # The copies carry their runs' ids: index them before they exist.
        async for record in self._threads.walk(source, ALL_CHECKPOINTS):
            entry = self._entry(target, record.checkpoint_id, record.state)
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

    async def afork_thread(self, config: RunnableConfig, target_thread_id: str) -> RunnableConfig:
        """Branch a thread at a checkpoint: a new thread, a branch of the source's session
        (``store.fork_session``, listed by ``store.list_branches``), holding the checkpoints
        and writes up to the one ``config`` names (its latest without a ``checkpoint_id``)
        and none after it; the config of that checkpoint in the new thread, to resume from.

        The target must not exist (``SessionExistsError``); a checkpoint the source does not
        hold is a ``ValidationError``. Another adapter's session raises ``ForeignSessionError``.
        """
        self._bind()
        source, ns = thread_of(config), namespace_of(config) or ""
        target = _thread_id(target_thread_id)
        await self._threads.check_writable(source)
        await self._threads.check_writable(target)
        checkpoint_id = checkpoint_id_of(config)
        if checkpoint_id is None:
            latest = await self._latest(source, ns)
            parsed = None if latest is None else parse_checkpoint_key(latest[0])
            checkpoint_id = None if parsed is None else parsed[1]
        if checkpoint_id is None or not await self._threads.get(
            source, checkpoint_key(ns, checkpoint_id)
        ):
            raise ValidationError(
                f"thread {source!r}: no checkpoint {checkpoint_id!r} in namespace {ns!r} "
                "to fork at",
                session_id=source,
            )
        await self.store.fork_session(source, target)
        later: list[str] = []
        async for record in self._threads.walk(target, ""):
            if _after(record.checkpoint_id, checkpoint_id):
                later.append(record.checkpoint_id)
            elif (entry := self._entry(target, record.checkpoint_id, record.state)) is not None:
                await self._runs.add(entry)
        await self._threads.delete(target, later)
        return config_for(target, ns, checkpoint_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's newest checkpoint and its writes;
        ``"delete"``: delete the threads. Another adapter's session among them raises
        ``ForeignSessionError`` before any is touched."""
        self._bind()
        if strategy not in ("keep_latest", "delete"):
            raise ValidationError(f"unknown prune strategy {strategy!r}: keep_latest or delete")
        if isinstance(thread_ids, str | bytes):
            raise ValidationError("thread_ids must be a sequence of thread ids, not one string")
        threads = [_thread_id(thread) for thread in thread_ids]
        shared = [await self._threads.check_writable(thread) for thread in threads]
        for thread, share in zip(threads, shared, strict=True):
            if strategy == "delete":
                await self._delete_thread(thread, share)
            else:
                await self._keep_latest(thread)

    async def _keep_latest(self, thread: str) -> None:
        kept: dict[str, str] = {}
        doomed: list[str] = []
        gone: list[Entry] = []
        async for record in self._threads.walk(thread, ALL_CHECKPOINTS):
            parsed = parse_checkpoint_key(record.checkpoint_id)
            if parsed is None:
                continue  # not the saver's record (ADP-3)
            ns, checkpoint_id = parsed
            if ns in kept:  # greatest key first: the first of a namespace is its newest
                doomed.append(record.checkpoint_id)
                if (entry := self._entry(thread, record.checkpoint_id, record.state)) is not None:
                    gone.append(entry)
            else:
                kept[ns] = checkpoint_id
        keep_writes = tuple(writes_prefix(ns, cid) for ns, cid in kept.items())
        doomed += [
            key
            async for key in self._own_keys(thread)
            if not key.startswith((ALL_CHECKPOINTS, *keep_writes))
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

    def fork_thread(self, config: RunnableConfig, target_thread_id: str) -> RunnableConfig:
        """Sync :meth:`afork_thread`."""
        return self._sync(self.afork_thread(config, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Sync :meth:`aprune`."""
        self._sync(self.aprune(thread_ids, strategy=strategy))

    def _bind(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()

    def _sync(self, call: Coroutine[Any, Any, _T]) -> _T:
        """Run ``call`` on the store's loop from this thread; ``EventLoopError`` if it cannot
        (ADP-7: never a wait for a loop that will not run it)."""
        return run_on(self._loop, call, "HelixCheckpointSaver")


async def _collect(found: AsyncIterator[CheckpointTuple]) -> list[CheckpointTuple]:
    return [item async for item in found]


def _after(key: str, checkpoint_id: str) -> bool:
    """Whether the record ``key`` belongs after the fork point ``checkpoint_id``: a
    checkpoint or write of a later checkpoint, or the claim of the fork point's child or a
    later one (LangGraph's checkpoint ids sort by time)."""
    if (found := parse_checkpoint_key(key)) is not None:
        return found[1] > checkpoint_id
    if (write := parse_write_key(key)) is not None:
        return write[1] > checkpoint_id
    if (claim := parse_claim_key(key)) is not None:
        return claim[1] >= checkpoint_id
    return False


def _thread_id(thread_id: Any) -> str:
    return check_thread(check_id(str(thread_id), "thread_id"))


def _pairs(thread: str, writes: Any) -> list[tuple[Any, Any]]:
    """``writes`` as ``(channel, value)`` pairs, or a ValidationError."""
    try:
        pairs = [(channel, value) for channel, value in writes]
    except (TypeError, ValueError):
        raise ValidationError(
            f"thread {thread!r}: writes must be (channel, value) pairs", session_id=thread
        ) from None
    return pairs


def _claimed(thread: str, key: str, ns: str, held: JsonValue) -> str:
    """The checkpoint id a claim record names, or ``CorruptRecordError``."""
    child = held.get("id") if isinstance(held, dict) else None
    if not isinstance(child, str) or not isinstance(held, dict) or held.get("ns") != ns:
        raise CorruptRecordError(
            f"thread {thread!r}: the claim {key!r} names no checkpoint of its namespace",
            session_id=thread,
            record=key,
        )
    checkpoint_key(ns, child)
    return child


def _run_of(metadata: Any) -> str | None:
    run = metadata.get("run_id") if isinstance(metadata, dict) else None
    return None if run is None else str(run)


def _matches(metadata: Any, filter: dict[str, Any]) -> bool:
    return isinstance(metadata, dict) and all(
        k in metadata and metadata[k] == v for k, v in filter.items()
    )
