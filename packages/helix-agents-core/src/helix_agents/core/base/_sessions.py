"""Sessions, scoped state and runs, once for every engine (copies: ``_branches``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pydantic import JsonValue

from ..cursors import decode_all_cursor, decode_sessions_cursor, encode_sessions_cursor
from ..errors import SessionExistsError
from ..inputs import check_id
from ..limits import check_listing_first
from ..listing import (
    FILTERED_BATCH,
    USER_SCAN_BUDGET,
    ListingFilter,
    check_listing_filter,
    scan,
)
from ..messages import JsonObject
from ..models import (
    ListedSession,
    ListedSessionsPage,
    RunStatus,
    Scope,
    SessionInfo,
    SessionsPage,
    SessionSummary,
)
from ..rules import (
    assert_fence,
    check_finish_status,
    check_new_session,
)
from ..scoped import check_scope
from ..seam import Changes, NewSession, Snapshot, Want
from ..sessiondoc import SessionDoc
from ._plumbing import Plumbing, fresh_head, info

__all__ = ["SessionMethods"]


_SCOPED = Want(session_scoped=True)


class SessionMethods(Plumbing):
    """Create, read, delete and clear sessions; list a user's; scoped state; runs."""

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        self._check_open()
        sid, meta = check_new_session(session_id, user_id, metadata)
        now = self._clock()
        new = NewSession(sid, user_id, now, meta)
        if await self.engine.create(new) != "created" and (
            not await self._reclaim(sid) or await self.engine.create(new) != "created"
        ):
            raise SessionExistsError(f"session {sid!r} exists", session_id=sid)
        head = fresh_head(new)
        self._keep_head(head)
        return info(head)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        self._check_open()
        check_id(session_id, "session_id")
        snap = await self.engine.snapshot(session_id, Want())
        return None if snap is None or self._expired(snap) else info(snap)

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds."""
        self._check_open()
        check_id(session_id, "session_id")
        self._forget(session_id)
        return await self.engine.delete(session_id)

    async def clear_session(self, session_id: str) -> None:
        """Drop rows and queues; keep the session, its user and metadata; cancel a live run."""

        def plan(snap: Snapshot) -> tuple[Changes, None]:
            now = self._clock()
            run = snap.current_run
            if run is not None and run.status == "live":
                run = run.model_copy(update={"status": "cancelled", "ended_at": now})
            return Changes(activity=self._activity(snap), clear=True, run=run), None

        await self._write(session_id, Want(), plan)

    async def list_sessions(
        self,
        user_id: str,
        *,
        first: int = 20,
        cursor: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id; with ``title`` or
        ``metadata``, those that pass them (META-6)."""
        self._check_open()
        check_id(user_id, "user_id")
        check_listing_first(first)
        wanted = check_listing_filter(None, None, metadata, title)
        after = None if cursor is None else decode_sessions_cursor(user_id, cursor)
        if not wanted.none:
            return await self._filtered_user_sessions(user_id, wanted, after, first)
        page: list[SessionSummary] = []
        while True:  # once, unless expired sessions left the page short
            asked = first + 1 - len(page)
            got = await self.engine.list_sessions(user_id, after, asked)
            page += [_summary(s) for s in got if await self._listed_live(s)]
            if len(got) < asked or len(page) > first:
                break
            after = (got[-1].last_activity_at, got[-1].id)
        next_cursor = None
        if len(page) > first:
            del page[first:]
            last = page[-1]
            next_cursor = encode_sessions_cursor(user_id, last.last_activity_at, last.id)
        return SessionsPage(sessions=tuple(page), next_cursor=next_cursor)

    async def _filtered_user_sessions(
        self,
        user_id: str,
        wanted: ListingFilter,
        after: tuple[datetime, str] | None,
        first: int,
    ) -> SessionsPage:
        """A filtered page of a user's sessions: each candidate's head is read to match
        its metadata and title, at most :data:`USER_SCAN_BUDGET` per call; a page cut
        short by it still carries a cursor (META-6)."""
        found: list[SessionSummary] = []
        scanned = 0
        while True:
            got = await self.engine.list_sessions(user_id, after, FILTERED_BATCH)
            for s in got:
                snap = await self.engine.snapshot(s.id, Want())
                if snap is not None and not self._expired(snap):
                    doc = SessionDoc(snap.metadata)
                    if wanted.matches_doc(doc.user, doc.title):
                        found.append(_summary(s))
                        if len(found) > first:
                            last = found[first - 1]
                            cursor = encode_sessions_cursor(user_id, last.last_activity_at, last.id)
                            return SessionsPage(sessions=tuple(found[:first]), next_cursor=cursor)
                after = (s.last_activity_at, s.id)
                scanned += 1
                if scanned >= USER_SCAN_BUDGET:
                    cursor = encode_sessions_cursor(user_id, *after)
                    return SessionsPage(sessions=tuple(found), next_cursor=cursor)
            if len(got) < FILTERED_BATCH:
                return SessionsPage(sessions=tuple(found), next_cursor=None)

    async def list_all_sessions(
        self,
        *,
        first: int = 20,
        cursor: str | None = None,
        user_id: str | None = None,
        active_since: datetime | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
        title: str | None = None,
    ) -> ListedSessionsPage:
        """Every session of the store, by id ascending, that passes the filters (LST-*,
        META-6)."""
        self._check_open()
        check_listing_first(first)
        wanted = check_listing_filter(user_id, active_since, metadata, title)
        after = None if cursor is None else decode_all_cursor(wanted.fingerprint, cursor)
        return await scan(self.engine.list_all, wanted, after, first, self._listed_expired)

    def _listed_expired(self, s: ListedSession) -> bool:
        """Whether a listed session (its stored metadata) is expired now (TTL-1)."""
        if not self._expiry.may_expire(s.metadata):
            return False
        return self._expiry.expired(s.last_activity_at, s.metadata, self._clock())

    async def _listed_live(self, s: SessionSummary) -> bool:
        """Whether an entry of a user's listing is not expired: decided on its metadata
        when the engine listed it (a :class:`ListedSession`), else on its head (TTL-1)."""
        if isinstance(s, ListedSession):
            return not self._listed_expired(s)
        snap = await self.engine.snapshot(s.id, Want())
        return snap is not None and not self._expired(snap)

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        self._check_open()
        check_scope(None, scope, owner)
        if scope == "session":
            return dict((await self._snapshot(owner, _SCOPED)).session_scoped)
        return await self.engine.scoped_state(scope, owner)

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""

        def plan(snap: Snapshot) -> tuple[Changes, None]:
            check_id(run_id, "run_id", session_id=session_id)
            check_finish_status(session_id, status)
            assert_fence(session_id, run_id, snap.current_run)
            assert snap.current_run is not None
            ended = snap.current_run.model_copy(
                update={"status": status, "ended_at": self._clock()}
            )
            return Changes(activity=self._activity(snap), run=ended), None

        await self._write(session_id, Want(), plan)


def _summary(s: SessionSummary) -> SessionSummary:
    """A user's listing entry as callers see it: an engine's :class:`ListedSession` (with
    the stored metadata) cut to the summary's fields."""
    if type(s) is SessionSummary:
        return s
    return SessionSummary(
        id=s.id,
        created_at=s.created_at,
        last_activity_at=s.last_activity_at,
        message_count=s.message_count,
        pending_approvals=s.pending_approvals,
    )
