"""``HelixMemoryService``: ADK's ``BaseMemoryService`` over any store that searches history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from typing_extensions import override

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    MessageCountConflictError,
    ScopedStateDelta,
    SessionNotFoundError,
    SessionStateStore,
)
from helix_agents.core.adapters import check_writable
from helix_agents.core.backend import encode_message_cursor
from helix_agents.core.context import MAX_HISTORY_LIMIT, ContextStore
from helix_agents.core.inputs import check_id
from helix_agents.core.limits import MAX_PAGE

from . import _names
from ._checks import event_json, refusing
from ._events import event_of, row_of
from ._memory_search import MAX_MEMORIES, pattern_of, query_words, score, text_of
from ._side_sessions import (
    adk_session,
    ensure_side_session,
    owner_id,
    readable_side_session,
    side_id,
)

__all__ = ["MEMORY_SESSION_FIELD", "HelixMemoryService"]

MEMORY_SESSION_FIELD = "adk_memory_session"
"""The provider field of an archived row: the ADK session it was added from (or ``None``)."""

_MAX_TRIES = 64
# Hits this close together are read back in one page rather than one page each.
_GAP = 20


class HelixMemoryService(BaseMemoryService):
    """ADK memory on a helix-agents store: each user's archived events, searched by core.

    Each user's memory is one store session, the archive, whose rows are the events
    added (docs/integrations/adk.md, ADKM-1..4); adds are idempotent and atomic, and
    ``search_memory`` is one ``search_history`` on the archive, ranked as ADK's
    in-memory service ranks. The store must also be a ``ContextStore`` (every backend
    is); it stays the caller's.
    """

    def __init__(self, store: SessionStateStore) -> None:
        if not isinstance(store, ContextStore):
            raise TypeError(f"{type(store).__name__} is not a ContextStore: it cannot search")
        self.store = store
        self._history: ContextStore = store

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        """Archive the session's events with content that are not archived yet."""
        _names.check_names(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id
        )
        await self._add(session.app_name, session.user_id, session.id, session.events)

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Archive ``events`` not archived yet; ``custom_metadata`` is not used."""
        _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id or "")
        await self._add(app_name, user_id, session_id, events)

    async def _add(
        self, app_name: str, user_id: str, session_id: str | None, events: Sequence[Event]
    ) -> None:
        sid = side_id(app_name, user_id, "memory")
        kept = [e for e in events if e.content is not None and e.content.parts]
        rows = {e.id: _archived(e, event_json(e, sid), session_id) for e in kept}  # refused first
        owner = owner_id(app_name, user_id, session_id, "memory")
        with refusing():
            check_id(owner, "memory owner", session_id=sid)
            if not rows:
                return
            if session_id is not None:
                info = await adk_session(self.store, app_name, user_id, session_id)
                if info is not None:
                    check_writable(info, "adk")
            count = (await ensure_side_session(self.store, sid, "memory")).message_count
            for _ in range(_MAX_TRIES):
                archived = (await self.store.get_scoped_state("user", owner)).get("events")
                before = archived if isinstance(archived, list) else []
                done = set(before)
                new = [event_id for event_id in rows if event_id not in done]
                if not new:
                    return
                commit = MessageCommit(
                    messages=tuple(rows[event_id] for event_id in new),
                    expect_message_count=count,
                    scoped_state=(
                        ScopedStateDelta(
                            scope="user",
                            owner=owner,
                            changes={"events": [*before, *new]},
                        ),
                    ),
                )
                try:
                    await self.store.append_messages(sid, commit)
                except MessageCountConflictError:
                    count = await self.store.get_message_count(sid)
                    continue
                return
            raise MessageCountConflictError(
                f"session {sid!r}: adding to memory lost {_MAX_TRIES} races in a row",
                session_id=sid,
            )

    @override
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The archived events sharing the most words with ``query`` (at most 10)."""
        _names.check_names(app_name=app_name, user_id=user_id, query=query)
        sid = side_id(app_name, user_id, "memory")
        words = query_words(query)
        pattern = pattern_of(words)
        with refusing():
            if pattern is None or await readable_side_session(self.store, sid) is None:
                return SearchMemoryResponse()
            try:
                found = await self._history.search_history(
                    sid, grep=pattern, limit=MAX_HISTORY_LIMIT
                )
                indexes = sorted(hit.index for hit in found.hits if not hit.archived)
                events = await self._rows(sid, indexes)
            except SessionNotFoundError:  # deleted since
                return SearchMemoryResponse()
        scored = [(score(words, text_of(e)), e) for e in events]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])
        return SearchMemoryResponse(memories=[_entry(e) for _, e in ranked[:MAX_MEMORIES]])

    async def _rows(self, sid: str, indexes: list[int]) -> list[Event]:
        """The events at ``indexes`` (ascending), one page per run of nearby indexes."""
        events: list[Event] = []
        wanted = set(indexes)
        runs: list[list[int]] = []
        for index in indexes:
            if runs and index - runs[-1][-1] <= _GAP and index - runs[-1][0] < MAX_PAGE:
                runs[-1].append(index)
            else:
                runs.append([index])
        for run in runs:
            cursor = encode_message_cursor(sid, "asc", run[0]) if run[0] else None
            page = await self.store.page_messages(sid, limit=run[-1] - run[0] + 1, cursor=cursor)
            for index, row in enumerate(page.messages, run[0]):
                event = event_of(row, sid, index) if index in wanted else None
                if event is not None:
                    events.append(event)
        return events


def _archived(event: Event, text: str, session_id: str | None) -> ChatMessage:
    """The archive's row of ``event``: the session service's row, naming its session (ADKF-11)."""
    row = row_of(event, text)
    return ChatMessage(
        role=row.role,
        content=row.content,
        **{**(row.__pydantic_extra__ or {}), MEMORY_SESSION_FIELD: session_id},
    )


def _entry(event: Event) -> MemoryEntry:
    assert event.content is not None
    return MemoryEntry(
        id=event.id,
        content=event.content,
        author=event.author,
        timestamp=datetime.fromtimestamp(event.timestamp).isoformat(),
    )
