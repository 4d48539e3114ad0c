"""The store calls of the saver: a LangGraph thread is the session of the same id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import suppress
from datetime import UTC, datetime

from pydantic import JsonValue

from helix_agents.core import (
    Checkpoint,
    ConcurrencyConflictError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
)
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

__all__ = ["ATTEMPTS", "RUN_ID", "Threads", "deleted_under"]

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
    """Records of LangGraph threads in one store; a missing thread reads as empty."""

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    async def save(
        self, thread_id: str, key: str, state: JsonValue, *, create: bool = True
    ) -> bool:
        """Insert-once ``state`` under ``key``; whether it is new.

        The thread's session is created when missing, and again if a
        ``delete_thread`` deletes it before the record lands (the write then
        lands in the new thread, docs/integrations/langgraph.md). With
        ``create=False`` a missing session raises ``SessionNotFoundError``.
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
                return (await self.store.save_checkpoint(thread_id, record)).recorded
            except SessionNotFoundError:
                if not create:
                    raise
            with suppress(SessionExistsError):  # another writer created it first
                await self.store.create_session(thread_id)
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
