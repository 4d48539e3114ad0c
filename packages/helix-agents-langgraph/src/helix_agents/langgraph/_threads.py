"""The store calls of the saver: a LangGraph thread is the session of the same id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

from pydantic import JsonValue

from helix_agents.core import (
    Checkpoint,
    ConcurrencyConflictError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
)
from helix_agents.core.adapters import AdapterName, check_writable, mark, owner_of, readable
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

__all__ = ["ADAPTER", "ATTEMPTS", "RUN_ID", "Threads", "deleted_under"]

ADAPTER: AdapterName = "langgraph"
"""The saver's mark on the sessions it creates (docs/integrations/sharing.md, ADP-1)."""

RUN_ID = "langgraph"
"""The ``run_id`` of every record the saver writes (LangGraph's run ids live in metadata)."""

ATTEMPTS = 8
"""How many times a write starts over when its thread is deleted under it."""


def deleted_under(thread_id: str) -> ConcurrencyConflictError:
    """The error of a write whose thread was deleted under it ``ATTEMPTS`` times."""
    return ConcurrencyConflictError(
        f"thread {thread_id!r} was deleted {ATTEMPTS} times while being written; retry",
        session_id=thread_id,
    )


class Threads:
    """Records of LangGraph threads in one store; a missing thread reads as empty.

    A thread's session is created with the saver's mark; a session another
    adapter marked is not the saver's to read or write (ADP-2): the callers ask
    :meth:`readable` or :meth:`check_writable` once per call.
    """

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    async def readable(self, thread_id: str) -> bool:
        """Whether the thread exists and is the saver's or shared."""
        info = await self.store.get_session(thread_id)
        return info is not None and readable(info, ADAPTER)

    async def foreign(self, thread_id: str) -> bool:
        """Whether the thread is a session another adapter marked."""
        info = await self.store.get_session(thread_id)
        return info is not None and not readable(info, ADAPTER)

    async def check_writable(self, thread_id: str) -> bool:
        """Raise ``ForeignSessionError`` for another adapter's session; whether it is shared.

        Shared: it exists and has no mark (the application's, or another runtime's).
        """
        info = await self.store.get_session(thread_id)
        if info is None:
            return False
        check_writable(info, ADAPTER)
        return owner_of(info) is None

    async def save(
        self,
        thread_id: str,
        key: str,
        state: JsonValue,
        *,
        create: bool = True,
        fence_run_id: str | None = None,
    ) -> bool:
        """Insert-once ``state`` under ``key``; whether it is new.

        The thread's session is created when missing, and again if a
        ``delete_thread`` deletes it before the record lands (the write then
        lands in the new thread, docs/integrations/langgraph.md). With
        ``create=False`` a missing session raises ``SessionNotFoundError``. With
        ``fence_run_id`` it lands only while that run is the session's live run
        (``RunSupersededError`` otherwise).
        """
        record = Checkpoint(
            checkpoint_id=key,
            run_id=RUN_ID,
            message_count=0,
            state=state,
            created_at=datetime.now(UTC),
        )
        for _ in range(ATTEMPTS):
            try:
                fenced = self.store.save_checkpoint(thread_id, record, fence_run_id=fence_run_id)
                return (await fenced).recorded
            except SessionNotFoundError:
                if not create:
                    raise
            try:
                await self.store.create_session(thread_id, metadata=mark(ADAPTER))
            except SessionExistsError:  # another writer created it first: whose is it?
                await self.check_writable(thread_id)
        raise deleted_under(thread_id)

    async def get(self, thread_id: str, key: str) -> JsonValue | None:
        """The state stored under ``key``, or ``None``."""
        try:
            found = await self.store.get_checkpoint(thread_id, key)
        except SessionNotFoundError:
            return None
        return None if found is None else found.state

    async def page(
        self, thread_id: str, prefix: str, before: str | None, limit: int
    ) -> list[Checkpoint]:
        """One page under ``prefix``, greatest key first; empty for a missing thread."""
        try:
            return await self.store.page_checkpoints(
                thread_id, prefix=prefix, before=before, limit=limit
            )
        except SessionNotFoundError:
            return []

    async def walk(self, thread_id: str, prefix: str) -> AsyncIterator[Checkpoint]:
        """Every record under ``prefix``, greatest key first, a page at a time."""
        before: str | None = None
        while True:
            page = await self.page(thread_id, prefix, before, MAX_CHECKPOINT_PAGE)
            for record in page:
                yield record
            if len(page) < MAX_CHECKPOINT_PAGE:
                return
            before = page[-1].checkpoint_id

    async def delete(self, thread_id: str, keys: Sequence[str]) -> None:
        """Delete the records ``keys`` (a missing thread has none)."""
        try:
            for start in range(0, len(keys), MAX_CHECKPOINT_PAGE):
                chunk = keys[start : start + MAX_CHECKPOINT_PAGE]
                await self.store.delete_checkpoints(thread_id, chunk)
        except SessionNotFoundError:
            return
