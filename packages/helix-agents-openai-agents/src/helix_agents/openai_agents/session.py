"""``HelixSession``: the OpenAI Agents SDK ``Session`` protocol over any session store."""

from __future__ import annotations

import asyncio
import random
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)

from helix_agents.core import (
    ChatMessage,
    ConcurrencyConflictError,
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
    session_handle,
)
from helix_agents.core.adapters import AdapterName, check_writable, claim_session, readable
from helix_agents.core.backend import check_id
from helix_agents.core.limits import MAX_COUNT
from helix_agents.core.runtime import delivery_commit

from ._compaction import read_snapshot
from ._context import read_item
from ._items import carry_ids, encode_items
from ._late import record_late_answers
from ._settle import settled

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session import _CompactionSnapshot
    from agents.run_context import RunContextWrapper

__all__ = ["ADAPTER", "HelixSession", "UserIdHook"]

UserIdHook: TypeAlias = Callable[["RunContextWrapper[Any]"], "str | None"]
"""Takes the run's context wrapper and names the user who owns a new session."""

APPEND_ATTEMPTS = 16
"""How many times ``add_items`` commits before giving up to writers that keep winning."""

ADAPTER: AdapterName = "openai-agents"
"""The mark of the sessions ``HelixSession`` creates (ADP-1)."""


class HelixSession:
    """An SDK ``Session`` whose items live in a :class:`SessionStateStore`.

    ``store`` stays the caller's: the session neither opens nor closes it, and
    :meth:`close` ends only the session.
    ``user_id`` (a string, or a :data:`UserIdHook` called with the run's
    context wrapper) owns the session when ``add_items`` creates it, so it
    shows in ``store.sessions(user_id)``. With ``fence_run_id`` every write
    lands only while that run is the session's current live run (OAI-2);
    :class:`HelixRun` builds such sessions. With ``archive_compacted`` the rows the SDK's
    compaction replaces go to the session's archive, where ``recall_history`` finds them
    (a :class:`HelixRun` whose strategy preserves history sets it). Semantics are in
    docs/integrations/openai-agents.md.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        store: SessionStateStore,
        *,
        user_id: str | UserIdHook | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        fence_run_id: str | None = None,
        archive_compacted: bool = False,
    ) -> None:
        self.session_id = check_id(session_id, "session_id")
        if not isinstance(archive_compacted, bool):
            raise ValidationError(
                f"session {session_id!r}: archive_compacted must be a bool, "
                f"got {type(archive_compacted).__name__}",
                session_id=session_id,
            )
        self.archive_compacted = archive_compacted
        """Whether the compaction hooks archive the rows they replace (CS-19)."""
        self.fence_run_id = (
            None
            if fence_run_id is None
            else check_id(fence_run_id, "fence_run_id", session_id=session_id)
        )
        if isinstance(user_id, str):
            check_id(user_id, "user_id", session_id=session_id)
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.store = store
        self._handle = session_handle(store, session_id)
        self._user_id = user_id
        # Serialise this instance's own appends, which would only conflict with each other;
        # one lock per event loop, as an asyncio lock cannot wake a waiter in another loop.
        self._append_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._locks_guard = threading.Lock()
        # The row count after this instance's last write: the next append's expected count.
        self._count: int | None = None
        # Whether this instance has seen the session be its own or shared (ADP-2). A mark
        # never changes, so it is asked once, again only after the session went missing.
        self._checked = False
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            # The SDK's own sessions say "<their class> is closed" (a RuntimeError).
            raise RuntimeError(f"{type(self).__name__} is closed")

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """Items oldest first; ``limit`` keeps the latest N (0: none, negative: all)."""
        self._check_open()
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ValidationError(
                f"session {self.session_id!r}: limit must be an int or None, "
                f"got {type(limit).__name__}",
                session_id=self.session_id,
            )
        resolved = resolve_session_limit(limit, self.session_settings)
        if resolved == 0:
            return []
        if not await self._mine(write=False):
            return []
        try:
            rows = await self._handle.messages(
                None if resolved is None or resolved < 0 else min(resolved, MAX_COUNT)
            )
        except SessionNotFoundError:
            self._checked = False
            return []
        return [item for row in rows if (item := read_item(row, self.session_id)) is not None]

    async def _mine(self, *, write: bool) -> bool:
        """Whether the session exists and is this adapter's or shared (ADP-2).

        A session of another adapter is absent for a read and a
        ``ForeignSessionError`` for a write.
        """
        if self._checked:
            return True
        info = await self.store.get_session(self.session_id)
        if info is None:
            return False
        if write:
            check_writable(info, ADAPTER)
        elif not readable(info, ADAPTER):
            return False
        self._checked = True
        return True

    async def add_items(
        self, items: list[TResponseInputItem], *, wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        """Append ``items`` in one commit, creating the session if it does not exist."""
        self._check_open()  # before the empty fast path: a closed session refuses [] too
        rows = encode_items(items, self.session_id)
        if not rows:
            return
        await settled(self._append(rows, wrapper))

    def _append_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._append_locks.get(loop)
        if lock is None:
            with self._locks_guard:
                lock = self._append_locks.setdefault(loop, asyncio.Lock())
        return lock

    async def _append(
        self, rows: list[ChatMessage], wrapper: RunContextWrapper[Any] | None
    ) -> None:
        async with self._append_lock():
            await self._commit(rows, wrapper)

    async def _commit(
        self, rows: list[ChatMessage], wrapper: RunContextWrapper[Any] | None
    ) -> None:
        expected = self._count if self._checked else None
        for attempt in range(APPEND_ATTEMPTS):
            if expected is None:
                expected = await self._count_or_create(wrapper)
                if expected is None:
                    continue  # deleted by another caller in between: count again
            try:
                result = await self._handle.append(
                    *rows, expect_message_count=expected, fence_run_id=self.fence_run_id
                )
            except RunSupersededError:
                # The run's tool outputs are not lost: the next run gets them as notices.
                await record_late_answers(self.store, self.session_id, rows)
                raise
            except MessageCountConflictError as exc:
                if attempt == APPEND_ATTEMPTS - 1:
                    raise
                expected = exc.actual
                if attempt:
                    # Writers that keep colliding spread out instead of retrying in lockstep.
                    await asyncio.sleep(random.uniform(0, 0.001 * attempt))
            except SessionNotFoundError:
                # Deleted since we counted: create it again on the next attempt.
                if attempt == APPEND_ATTEMPTS - 1:
                    raise
                expected, self._checked = None, False
            else:
                self._count = result.message_count
                return
        raise MessageCountConflictError(
            f"session {self.session_id!r}: add_items gave up after {APPEND_ATTEMPTS} attempts",
            session_id=self.session_id,
        )

    async def _count_or_create(self, wrapper: RunContextWrapper[Any] | None) -> int | None:
        """The row count of the session, created (marked) if missing; ``None``: ask again.

        Raises ``ForeignSessionError`` for a session of another adapter.
        """
        info = await claim_session(
            self.store, self.session_id, ADAPTER, user_id=self._owner(wrapper)
        )
        if info is None:  # deleted by another caller in between: ask again
            return None
        self._checked = True
        return info.message_count

    def _owner(self, wrapper: RunContextWrapper[Any] | None) -> str | None:
        if self._user_id is None or isinstance(self._user_id, str):
            return self._user_id
        if wrapper is None:
            return None
        user_id = self._user_id(wrapper)
        return None if user_id is None else check_id(user_id, "user_id", session_id=self.session_id)

    async def pop_item(
        self, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        """Remove and return the newest item atomically; ``None`` when there is none.

        Rows another runtime wrote are not items: they are removed and passed over.
        """
        self._check_open()
        self._count = None
        return await settled(self._pop())

    async def _pop(self) -> TResponseInputItem | None:
        if not await self._mine(write=True):
            return None
        while True:
            try:
                rows = await self.store.pop_messages(
                    self.session_id, 1, fence_run_id=self.fence_run_id
                )
            except SessionNotFoundError:
                self._checked = False
                return None
            if not rows:
                return None
            # A corrupt row is removed all the same; its error names it (ADP-6).
            item = read_item(rows[0], self.session_id)
            if item is not None:
                return item

    async def deliver_queued(
        self, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """Deliver every queued context item and late answer in one commit (OAI-1).

        The commit appends the context rows that carry them and marks each delivered,
        atomically (fenced with ``fence_run_id``). Returns the rows as the model sees
        them (lowered to ``user`` messages), ``[]`` when nothing was queued.
        """
        self._check_open()
        return await settled(self._deliver(wrapper))

    async def _deliver(self, wrapper: RunContextWrapper[Any] | None) -> list[TResponseInputItem]:
        async with self._append_lock():
            expected = self._count if self._checked else None
            for attempt in range(APPEND_ATTEMPTS):
                if expected is None:
                    expected = await self._count_or_create(wrapper)
                    if expected is None:
                        continue
                commit = await delivery_commit(
                    self.store, self.session_id, fence_run_id=self.fence_run_id, expected=expected
                )
                if commit is None:
                    return []
                try:
                    result = await self.store.append_messages(self.session_id, commit)
                except ConcurrencyConflictError as exc:
                    # The log moved, or another runner delivered some of them: read again.
                    if attempt == APPEND_ATTEMPTS - 1:
                        raise
                    actual = getattr(exc, "actual", None)
                    expected = actual if isinstance(actual, int) else None
                    continue
                self._count = result.message_count
                return [
                    item
                    for row in commit.messages
                    if (item := read_item(row, self.session_id)) is not None
                ]
        raise MessageCountConflictError(
            f"session {self.session_id!r}: delivery gave up after {APPEND_ATTEMPTS} attempts",
            session_id=self.session_id,
        )

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Remove every item; the session itself (and its owner) stays."""
        self._check_open()
        self._count = None
        await settled(self._clear())

    async def _clear(self) -> None:
        if not await self._mine(write=True):
            return
        try:
            await self._handle.clear()
        except SessionNotFoundError:
            self._checked = False

    def close(self) -> None:
        """End this session object: later calls raise ``RuntimeError``; idempotent.

        The store stays open (it is the caller's), and so do the session's rows:
        another ``HelixSession`` on the same id goes on using them.
        """
        self._closed = True

    def _transforms_items(self) -> bool:
        # A subclass that transforms items must supply its own hooks, as the SDK's do.
        cls = type(self)
        return any(
            getattr(cls, name) is not getattr(HelixSession, name)
            for name in ("get_items", "add_items")
        )

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """The SDK's whole-history replacement for manual compaction, in one commit."""
        self._check_open()
        if self._transforms_items():
            return False
        fresh = encode_items(items, self.session_id)
        archive = self.archive_compacted
        async with self._append_lock():
            self._count = None
            for attempt in range(APPEND_ATTEMPTS):
                expected = await self._count_or_create(None)
                if expected is None:
                    continue
                try:
                    # Items kept as they were keep their rows' ids: not archived, only cut.
                    rows = (
                        carry_ids(fresh, await self.store.get_messages(self.session_id))
                        if archive
                        else fresh
                    )
                    result = await self.store.replace_messages(
                        self.session_id,
                        0,
                        rows,
                        expect_message_count=expected,
                        archive=archive,
                        fence_run_id=self.fence_run_id,
                    )
                except (MessageCountConflictError, SessionNotFoundError):
                    if attempt == APPEND_ATTEMPTS - 1:
                        raise
                    self._checked = False
                    continue
                self._count = result.message_count
                return True
        return False

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[TResponseInputItem], bool] | None = None
    ) -> _CompactionSnapshot | None:
        """The SDK's suffix-replacement hook for automatic compaction (see docs)."""
        self._check_open()
        if self._transforms_items():
            return None
        self._count = None
        # The snapshot is the first half of a replacement: another adapter's session refuses.
        await self._mine(write=True)
        return await read_snapshot(
            self.store,
            self.session_id,
            limit,
            prune_prefix,
            self._check_open,
            archive=self.archive_compacted,
            fence_run_id=self.fence_run_id,
        )
