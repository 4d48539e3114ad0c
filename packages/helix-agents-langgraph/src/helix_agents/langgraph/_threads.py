"""The store calls of the saver: a LangGraph thread is the session of the same id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import suppress
from datetime import UTC, datetime

from pydantic import JsonValue

from helix_agents.core import (
    MAX_CHECKPOINT_PAGE,
    Checkpoint,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
)

__all__ = ["RUN_ID", "Threads"]

RUN_ID = "langgraph"
"""The ``run_id`` of every record the saver writes (LangGraph's run ids live in metadata)."""


class Threads:
    """Records of LangGraph threads in one store; a missing thread reads as empty."""

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    async def save(self, thread_id: str, key: str, state: JsonValue) -> bool:
        """Insert-once ``state`` under ``key``; the thread's session is created when missing."""
        record = Checkpoint(
            checkpoint_id=key,
            run_id=RUN_ID,
            message_count=0,
            state=state,
            created_at=datetime.now(UTC),
        )
        try:
            return (await self.store.save_checkpoint(thread_id, record)).recorded
        except SessionNotFoundError:
            with suppress(SessionExistsError):  # another writer created it first
                await self.store.create_session(thread_id)
            return (await self.store.save_checkpoint(thread_id, record)).recorded

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
