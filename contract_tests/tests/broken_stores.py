"""Stores with one plausible bug each, built only through the public API.

Each wraps a correct store and forwards every call to it, except the one
behaviour it gets wrong (in a way a real implementation plausibly would).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from helix_agents.core import (
    ApprovalResolution,
    CommitResult,
    Message,
    MessageCommit,
    MessageCountConflictError,
    RecordResult,
    SessionInfo,
    SessionStateStore,
    StoredContextItem,
)


class Wrapper:
    """Forwards every call to ``inner``; subclasses override what they break."""

    def __init__(self, inner: SessionStateStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> Wrapper:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


# --- blunt breaks of single rules ---------------------------------------------------------


class RepeatOverwrites(Wrapper):
    """A repeat record replaces the queued item instead of being ignored."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.latest: dict[tuple[str, str], StoredContextItem] = {}

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        result = await self.inner.record_context_item(session_id, record, fence_run_id=fence_run_id)
        if not result.recorded:
            self.latest[session_id, record.key] = record
        return result

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        listed = await self.inner.list_undelivered_context_items(session_id)
        return [self.latest.get((session_id, r.key), r) for r in listed]


class CountCheckedAfterWrite(Wrapper):
    """Writes the rows first and checks the expected count afterwards."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        expected = commit.expect_message_count
        result = await self.inner.append_messages(
            session_id, commit.model_copy(update={"expect_message_count": None})
        )
        if expected is not None and commit.start_run is None and expected != result.first_index:
            raise MessageCountConflictError("stale", session_id=session_id)
        return result


class TruncateKeepsDeliveries(Wrapper):
    """Items and late answers delivered by rows a cut removes stay out of the listings."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.hidden: set[tuple[str, str]] = set()

    async def _cut(self, session_id: str, cut: Any) -> Any:
        before = await self._listed(session_id)
        result = await cut()
        self.hidden |= {(session_id, k) for k in await self._listed(session_id) - before}
        return result

    async def _listed(self, session_id: str) -> set[str]:
        items = await self.inner.list_undelivered_context_items(session_id)
        answers = await self.inner.list_undelivered_late_answers(session_id)
        return {i.key for i in items} | {a.call_id for a in answers}

    def _shown(self, session_id: str, key: str) -> bool:
        return (session_id, key) not in self.hidden

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        await self._cut(
            session_id,
            lambda: self.inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id),
        )

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        popped: list[Message] = await self._cut(
            session_id,
            lambda: self.inner.pop_messages(session_id, count, fence_run_id=fence_run_id),
        )
        return popped

    async def replace_messages(self, session_id: str, *args: Any, **kwargs: Any) -> CommitResult:
        result: CommitResult = await self._cut(
            session_id, lambda: self.inner.replace_messages(session_id, *args, **kwargs)
        )
        return result

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        listed = await self.inner.list_undelivered_context_items(session_id)
        return [r for r in listed if self._shown(session_id, r.key)]

    async def list_undelivered_late_answers(self, session_id: str) -> list[Any]:
        listed = await self.inner.list_undelivered_late_answers(session_id)
        return [a for a in listed if self._shown(session_id, a.call_id)]


class FenceIgnoredOnRecord(Wrapper):
    """Records context items whatever run is current."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        return await self.inner.record_context_item(session_id, record)


class CloneCopiesItems(Wrapper):
    """Copies the queued context items into the clone."""

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        info = await self.inner.clone_session(source_id, target_id, up_to=up_to)
        for record in await self.inner.list_undelivered_context_items(source_id):
            await self.inner.record_context_item(info.id, record)
        return info


class ResolvesEveryTime(Wrapper):
    """Says ``resolved`` to every caller of a known approval."""

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        answer = await self.inner.resolve_approval(session_id, approval_id)
        return "resolved" if answer == "already-resolved" else answer


class PopByReadThenTruncate(Wrapper):
    """Pops as a client of the older protocol must: count, read the last rows, truncate."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        total = await self.inner.get_message_count(session_id)
        await asyncio.sleep(0)  # each step its own call, as over a network
        rows = await self.inner.get_messages(session_id, limit=count)
        await asyncio.sleep(0)
        await self.inner.truncate_messages(session_id, total - len(rows), fence_run_id=fence_run_id)
        return rows


class ReplaceCheckedThenWritten(Wrapper):
    """Checks the expected count, then cuts and appends in later calls."""

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        if await self.inner.get_message_count(session_id) != expect_message_count:
            raise MessageCountConflictError("stale", session_id=session_id)
        await asyncio.sleep(0)
        await self.inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        return await self.inner.append_messages(session_id, MessageCommit(messages=tuple(messages)))


class PopNewestFirst(Wrapper):
    """Returns the popped rows newest first."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        popped = await self.inner.pop_messages(session_id, count, fence_run_id=fence_run_id)
        return popped[::-1]
