"""``MemoryEngine``: the engine seam on a :class:`MemoryData` in this process."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from helix_agents.core import JsonObject
from helix_agents.core.backend import (
    Changes,
    Engine,
    NewSession,
    Refused,
    SessionDump,
    Snapshot,
    Want,
    apply_changes,
    copy_prefix,
    dump_of,
    listed_of,
    scoped_maps_of,
    snapshot_of,
)
from helix_agents.core.models import ListedSession, SessionSummary

from ._state import MemoryData, SessionData

__all__ = ["MemoryEngine"]

_HEAD = Want()


class MemoryEngine(Engine):
    """Sessions in a :class:`MemoryData`; each session's lock is held for one read or
    write, so sessions never wait on each other."""

    system = "helix.memory"

    def __init__(self, data: MemoryData, namespace: str | None = None) -> None:
        self.data = data
        self.namespace = namespace

    def _live(self, session_id: str) -> SessionData | None:
        return self.data.sessions.get(session_id)

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session, read under its lock."""
        session = self._live(session_id)
        if session is None:
            return None
        with session.lock:
            return None if session.deleted else snapshot_of(session, want)

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """Apply under the session's lock if it is still at ``version``; the new head."""
        session = self._live(session_id)
        if session is None:
            return Refused(None)
        with session.lock:
            if session.deleted:
                return Refused(None)
            if session.version != version:
                return Refused(snapshot_of(session, want))
            old = session.last_activity_at
            apply_changes(session, changes, self._merge_shared)
            self.data.listing.move(session.user_id, old, session.last_activity_at, session.id)
            return snapshot_of(session, _HEAD)

    def _merge_shared(self, key: tuple[str, str], values: Mapping[str, Any]) -> None:
        with self.data.scoped_lock:
            self.data.scoped.setdefault(key, {}).update(values)

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Insert a new session, or a clone of a source still at the version read."""
        fresh = SessionData(
            new.session_id, new.user_id, new.created_at, new.created_at, new.metadata, new.version
        )
        if new.clone_of is not None:
            source_id, version, end = new.clone_of
            source = self._live(source_id)
            if source is None:
                return Refused(None)
            with source.lock:
                if source.deleted:
                    return Refused(None)
                if source.version != version:
                    return Refused(snapshot_of(source, Want()))
                copy_prefix(source, fresh, end)
        # A deleted session leaves the map under its lock, so anything found here is live;
        # holding the new one's lock keeps writers out until it is listed.
        with fresh.lock:
            if self.data.sessions.setdefault(fresh.id, fresh) is not fresh:
                return "exists"
            self.data.listing.add(fresh.user_id, fresh.last_activity_at, fresh.id)
        return "created"

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """Build the session apart, then publish it whole: readers find it only complete,
        and a plan that fails leaves nothing (docs/export.md, EXP-11)."""
        fresh = SessionData(
            new.session_id, new.user_id, new.created_at, new.created_at, new.metadata, new.version
        )
        shared: list[tuple[tuple[str, str], Mapping[str, Any]]] = []
        for changes in plans:
            apply_changes(fresh, changes, lambda key, values: shared.append((key, values)))
        with fresh.lock:
            if self.data.sessions.setdefault(fresh.id, fresh) is not fresh:
                return "exists"
            self.data.listing.add(fresh.user_id, fresh.last_activity_at, fresh.id)
            for key, values in shared:
                self._merge_shared(key, values)
        return "created"

    async def delete(self, session_id: str) -> bool:
        """Mark the session deleted; drop it from the map and the listing."""
        return self._delete(session_id, None)

    async def delete_at(self, session_id: str, version: int) -> bool:
        """Delete the session under its lock if it is still at ``version``."""
        return self._delete(session_id, version)

    def _delete(self, session_id: str, version: int | None) -> bool:
        session = self._live(session_id)
        if session is None:
            return False
        with session.lock:
            if session.deleted or version not in (None, session.version):
                return False
            session.deleted = True
            self.data.sessions.pop(session_id, None)
            self.data.listing.remove(session.user_id, session.last_activity_at, session_id)
            return True

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """Delete the sessions, then drop the user's map of scoped state."""
        for session_id in session_ids:
            await self.delete(session_id)
        with self.data.scoped_lock:
            self.data.scoped.pop(("user", user_id), None)

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """A page of the listing index, skipping sessions deleted meanwhile."""
        page: list[SessionSummary] = []
        for session_id in self.data.listing.page(user_id, after, limit):
            session = self._live(session_id)
            if session is not None:
                with session.lock:
                    if not session.deleted:
                        page.append(listed_of(session))  # its metadata decides expiry
        return page

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """A page of the id index, skipping sessions deleted meanwhile (and reading on
        until ``limit`` or the end)."""
        page: list[ListedSession] = []
        while len(page) < limit:
            ids = self.data.listing.page_ids(after_id, limit - len(page))
            if not ids:
                break
            after_id = ids[-1]
            for session_id in ids:
                session = self._live(session_id)
                if session is not None:
                    with session.lock:
                        if not session.deleted:
                            page.append(listed_of(session))
        return page

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """A copy of the app or user map."""
        with self.data.scoped_lock:
            return copy.deepcopy(self.data.scoped.get((scope, owner), {}))

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session, read under its lock."""
        session = self._live(session_id)
        if session is None:
            return None
        with session.lock:
            return None if session.deleted else dump_of(session)

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """A copy of every app and user map that holds a key."""
        with self.data.scoped_lock:
            return scoped_maps_of(self.data.scoped)
