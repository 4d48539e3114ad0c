"""The MCP SDK's ``EventStore`` on a helix-agents session store (docs/integrations/mcp.md).

A stream is a session (marked ``helix.adapter: mcp``, its stream id in the metadata
under ``mcp.stream_id``) and an event is a row whose provider field ``mcp_event`` holds
the JSON-RPC message as JSON text (``None`` for a priming event). An event's id is
``<session id>:<row index>``, so a ``Last-Event-ID`` names its stream on any server
that shares the store.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

import pydantic
import pydantic_core
from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

from helix_agents.core import (
    ChatMessage,
    Message,
    MessageCommit,
    MessageCountConflictError,
    SessionInfo,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.adapters import ADAPTER_KEY, mark, readable
from helix_agents.core.cursors import encode_message_cursor
from helix_agents.core.inputs import check_id, check_record

from ._ids import event_id, parse_event_id
from .errors import CorruptEventError

__all__ = ["ADAPTER", "EVENT_FIELD", "STREAM_KEY", "HelixEventStore"]

ADAPTER: Final = "mcp"
"""The adapter name in a stream's metadata (ADP-1)."""
EVENT_FIELD: Final = "mcp_event"
"""The provider field of a row that holds the event's message as JSON text."""
STREAM_KEY: Final = "mcp.stream_id"
"""The metadata key that holds the SDK's stream id."""
REPLAY_PAGE: Final = 200
"""Rows read per round trip of a replay."""
_COMMIT_TRIES: Final = 100


class HelixEventStore(EventStore):
    """Streams and their events in ``store`` (never closed by this class).

    ``ttl``: a stream with no event for that long is not replayed (MCP-5) and
    :meth:`purge_expired` deletes it. ``max_streams``: how many stream ids this
    instance remembers (the least recently used is forgotten; its next event starts
    a new stream, MCP-1).
    """

    def __init__(
        self,
        store: SessionStateStore,
        *,
        ttl: timedelta | None = None,
        max_streams: int = 10_000,
    ) -> None:
        if ttl is not None and ttl <= timedelta(0):
            raise ValidationError(f"ttl must be a positive timedelta, got {ttl!r}")
        if isinstance(max_streams, bool) or not isinstance(max_streams, int) or max_streams < 1:
            raise ValidationError(f"max_streams must be a positive int, got {max_streams!r}")
        self.store = store
        self.ttl = ttl
        self._max_streams = max_streams
        # stream id -> its session; session -> the row count this instance expects next.
        self._streams: OrderedDict[StreamId, str] = OrderedDict()
        self._next: dict[str, int] = {}
        # Streams a replay re-opened -> the index of the last row it read: their next
        # priming event continues them from there (MCP-3).
        self._resumed: dict[StreamId, int] = {}
        # One writer or replay tail per session at a time in this instance (MCP-4).
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def _lock(self, session_id: str) -> asyncio.Lock:
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Append the event to its stream's session and return its id (MCP-1, MCP-4, MCP-6)."""
        check_id(stream_id, "stream_id")
        text = None if message is None else _json(stream_id, message)
        session_id = self._streams.get(stream_id)
        resumed = self._resumed.pop(stream_id, None) if message is None else None
        if resumed is not None and session_id is not None:
            # The priming event of a stream a replay re-opened: resuming after the last row
            # the replay read is what it means, so its id is that row's, and nothing is
            # written (no I/O: the SDK re-opens the stream for live events right after it).
            return event_id(session_id, resumed)
        if session_id is None or message is None:
            # Checked before the session exists: a refused event leaves nothing behind.
            check_record(_row(text, 0))
            info = await self.store.create_session(metadata=mark(ADAPTER, {STREAM_KEY: stream_id}))
            session_id = info.id
            self._remember(stream_id, session_id, 0)
        async with self._lock(session_id):
            index = await self._append(session_id, self._next.get(session_id, 0), text)
            self._remember(stream_id, session_id, index + 1)
        return event_id(session_id, index)

    async def _append(self, session_id: str, expected: int, text: str | None) -> int:
        for _ in range(_COMMIT_TRIES):
            commit = MessageCommit(messages=(_row(text, expected),), expect_message_count=expected)
            try:
                result = await self.store.append_messages(session_id, commit)
            except MessageCountConflictError:
                # Another writer (a server sharing the store) appended first: follow it.
                expected = await self.store.get_message_count(session_id)
                continue
            return result.first_index
        raise MessageCountConflictError(
            f"session {session_id!r}: {_COMMIT_TRIES} appends lost to concurrent writers",
            session_id=session_id,
        )

    def _remember(self, stream_id: StreamId, session_id: str, next_index: int) -> None:
        # A stream id names one session at a time (a session, one stream id: its metadata's).
        previous = self._streams.get(stream_id)
        if previous is not None and previous != session_id:
            self._next.pop(previous, None)
        self._streams[stream_id] = session_id
        self._streams.move_to_end(stream_id)
        self._next[session_id] = next_index
        while len(self._streams) > self._max_streams:
            forgotten, forgotten_session = self._streams.popitem(last=False)
            self._resumed.pop(forgotten, None)
            self._next.pop(forgotten_session, None)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the stream's events after ``last_event_id``; its stream id, or ``None`` if
        the id is not one of a live stream of this store (MCP-2, MCP-3, MCP-5)."""
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        session_id, index = parsed
        info = await self.store.get_session(session_id)
        stream_id = None if info is None else self._stream_of(info)
        if info is None or stream_id is None or index >= info.message_count:
            return None
        following = index + 1
        async for start, rows in self._pages(session_id, following):
            if start == index + 1 and rows and _row_id(rows[0]) != str(start):
                return None  # retention dropped events the client has not seen (MCP-5)
            for event in _events(session_id, start, rows):
                await send_callback(event)
            following = start + len(rows)
        # The tail read under the lock: no write of this instance lands unseen before the
        # stream is re-opened (the SDK registers it for live events when this returns).
        tail: list[EventMessage] = []
        async with self._lock(session_id):
            async for start, rows in self._pages(session_id, following):
                tail += _events(session_id, start, rows)
                following = start + len(rows)
            self._remember(stream_id, session_id, following)
            self._resumed[stream_id] = following - 1
        for event in tail:
            await send_callback(event)
        return stream_id

    async def _pages(
        self, session_id: str, start: int
    ) -> AsyncIterator[tuple[int, Sequence[Message]]]:
        """The rows from index ``start`` on, ``REPLAY_PAGE`` per read, each page with the
        index of its first row."""
        cursor: str | None = encode_message_cursor(session_id, "asc", start)
        while cursor is not None:
            page = await self.store.page_messages(session_id, limit=REPLAY_PAGE, cursor=cursor)
            yield start, page.messages
            start += len(page.messages)
            cursor = page.next_cursor

    def _stream_of(self, info: SessionInfo) -> StreamId | None:
        """The stream id of a live stream session, ``None`` for any other session."""
        stream_id = info.metadata.get(STREAM_KEY)
        if info.metadata.get(ADAPTER_KEY) != ADAPTER or not readable(info, ADAPTER):
            return None
        if not isinstance(stream_id, str) or self._expired(info.last_activity_at):
            return None
        return stream_id

    def _expired(self, last_activity_at: datetime, now: datetime | None = None) -> bool:
        if self.ttl is None:
            return False
        return (now or datetime.now(UTC)) - last_activity_at > self.ttl

    async def purge_expired(self) -> int:
        """Delete the streams idle for longer than ``ttl``; how many (MCP-5)."""
        if self.ttl is None:
            return 0
        now = datetime.now(UTC)
        deleted, cursor = 0, None
        while True:
            page = await self.store.list_all_sessions(
                first=500, cursor=cursor, metadata={ADAPTER_KEY: ADAPTER}
            )
            for listed in page.sessions:
                if self._expired(listed.last_activity_at, now):
                    deleted += await self.store.delete_session(listed.id)
            cursor = page.next_cursor
            if cursor is None:
                return deleted


def _json(stream_id: StreamId, message: JSONRPCMessage) -> str:
    """The message as the SDK sends it; one that JSON cannot hold is refused (MCP-6)."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except (pydantic_core.PydanticSerializationError, ValueError, RecursionError) as exc:
        raise ValidationError(
            f"stream_id {stream_id!r:.80}: message {type(message).__name__} is not JSON ({exc})"
        ) from None


def _row(text: str | None, index: int) -> ChatMessage:
    return ChatMessage(role="assistant", content=None, id=str(index), **{EVENT_FIELD: text})


def _row_id(row: object) -> str | None:
    return getattr(row, "id", None)


def _events(session_id: str, start: int, rows: Sequence[Message]) -> list[EventMessage]:
    """The events of ``rows`` (row ``start`` first), priming events and others' rows left out."""
    found = []
    for offset, row in enumerate(rows):
        message = _message(row, session_id)
        if message is not None:
            found.append(EventMessage(message, event_id(session_id, start + offset)))
    return found


def _message(row: object, session_id: str) -> JSONRPCMessage | None:
    """The message of an event row; ``None`` for a priming event or a row not of this adapter."""
    extra = row.model_extra if isinstance(row, ChatMessage) else None
    row_id = getattr(row, "id", None)
    if not extra or EVENT_FIELD not in extra:
        return None  # a row another writer added to the session (ADP-3)
    text = extra[EVENT_FIELD]
    if text is None:
        return None
    try:
        if not isinstance(text, str):
            raise TypeError(type(text).__name__)
        return jsonrpc_message_adapter.validate_json(text)
    except (TypeError, pydantic.ValidationError) as exc:
        raise CorruptEventError(
            f"session {session_id!r}: row {row_id!r} is not a JSON-RPC message "
            f"({type(exc).__name__})",
            session_id=session_id,
            row_id=row_id,
        ) from None
