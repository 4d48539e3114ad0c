"""``JsonDocumentStore``: a complete backend on the engine seam, one JSON document per
session.

The storage is any ``MutableMapping[str, str]`` from session id to JSON text (a
plain ``dict`` here; a key-value database would do). The store is core's
``StoreBase``: every public method, check and rule comes from core. This module
is the engine: it reads a session as a snapshot and applies the changes core
planned, only if the document is still at the version the plan was built on.
See docs/backends/writing.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Unpack

import pydantic

from helix_agents.core import JsonObject
from helix_agents.core.backend import (
    Changes,
    Engine,
    ExpiryOptions,
    NewSession,
    Refused,
    SessionDump,
    SessionRecords,
    Snapshot,
    StoreBase,
    Want,
    apply_changes,
    copy_prefix,
    dump_of,
    listed_of,
    scoped_maps_of,
    snapshot_of,
    utcnow,
)
from helix_agents.core.models import ListedSession, SessionSummary

__all__ = ["JsonDocumentEngine", "JsonDocumentStore"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_document = pydantic.TypeAdapter(SessionRecords)


class JsonDocumentEngine(Engine):
    """Sessions as JSON documents in ``documents``; app and user maps in ``shared``.

    A write loads a document, applies the changes and saves it with nothing awaited
    in between, so on one event loop it is atomic. An engine on a real database does
    the same in one statement or transaction guarded by the session's version.
    """

    system = "helix.example"

    def __init__(self, documents: MutableMapping[str, str], shared: MutableMapping[str, str]):
        self.documents = documents
        self.shared = shared

    def _load(self, session_id: str) -> SessionRecords | None:
        text = self.documents.get(session_id)
        return None if text is None else _document.validate_json(text)

    def _save(self, records: SessionRecords) -> None:
        self.documents[records.id] = _document.dump_json(
            records, by_alias=True, exclude_unset=True
        ).decode()

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session's document, read as a snapshot."""
        records = self._load(session_id)
        return None if records is None else snapshot_of(records, want)

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """Apply the changes if the document is still at ``version``."""
        records = self._load(session_id)
        if records is None:
            return Refused(None)
        if records.version != version:
            return Refused(snapshot_of(records, want))
        apply_changes(records, changes, self._merge_shared)
        self._save(records)
        return snapshot_of(records, Want())

    def _merge_shared(self, key: tuple[str, str], values: Mapping[str, Any]) -> None:
        name = json.dumps(key)
        self.shared[name] = json.dumps({**json.loads(self.shared.get(name, "{}")), **values})

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Save a new document unless the id is taken; a clone copies its source's prefix."""
        if new.session_id in self.documents:
            return "exists"
        fresh = SessionRecords(
            new.session_id, new.user_id, new.created_at, new.created_at, new.metadata, new.version
        )
        if new.clone_of is not None:
            source_id, version, end = new.clone_of
            source = self._load(source_id)
            if source is None or source.version != version:
                return Refused(None if source is None else snapshot_of(source, Want()))
            copy_prefix(source, fresh, end)
        self._save(fresh)
        return "created"

    async def delete(self, session_id: str) -> bool:
        """Drop the session's document."""
        return self.documents.pop(session_id, None) is not None

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """A scan of every document (a database would keep an index on the order)."""
        mine = [r for r in map(self._load, list(self.documents)) if r and r.user_id == user_id]
        mine.sort(key=lambda r: _order(r.last_activity_at, r.id))
        if after is not None:
            mine = [r for r in mine if _order(r.last_activity_at, r.id) > _order(*after)]
        return [listed_of(r) for r in mine[:limit]]  # with metadata: core decides expiry

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """The next ids in order, by a sort of every key (a database would range-scan)."""
        ids = sorted(i for i in self.documents if after_id is None or i > after_id)[:limit]
        return [listed_of(r) for r in map(self._load, ids) if r is not None]

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map, ``{}`` if never written."""
        loaded: JsonObject = json.loads(self.shared.get(json.dumps([scope, owner]), "{}"))
        return loaded

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """Drop the user's session documents and map of scoped state (docs/lifecycle.md)."""
        for session_id in session_ids:
            self.documents.pop(session_id, None)
        self.shared.pop(json.dumps(["user", user_id]), None)

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session's document, for an export (docs/export.md)."""
        records = self._load(session_id)
        return None if records is None else dump_of(records)

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """Every app and user map that holds a key, for an export."""
        maps = {tuple(json.loads(name)): json.loads(text) for name, text in self.shared.items()}
        return scoped_maps_of(maps)


def _order(at: datetime, session_id: str) -> tuple[int, str]:
    """The listing order: newest activity first, ties by id."""
    return (-((at - _EPOCH) // timedelta(microseconds=1)), session_id)


class JsonDocumentStore(StoreBase):
    """Both protocols on :class:`JsonDocumentEngine`; stores given the same mappings share
    their sessions."""

    def __init__(
        self,
        documents: MutableMapping[str, str],
        shared: MutableMapping[str, str],
        *,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = utcnow,
        **expiry: Unpack[ExpiryOptions],
    ) -> None:
        engine = JsonDocumentEngine(documents, shared)
        super().__init__(engine, max_messages=max_messages, clock=clock, **expiry)
