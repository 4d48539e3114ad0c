"""Sessions of the Postgres store: create, get, delete, clear, clone, list."""

from __future__ import annotations

import json
from typing import Any

from helix_agents.core import (
    JsonObject,
    SessionExistsError,
    SessionInfo,
    SessionsPage,
    ValidationError,
)
from helix_agents.core.backend import (
    check_id,
    check_limit,
    check_new_session,
    decode_sessions_cursor,
    encode_sessions_cursor,
    new_session_id,
)
from helix_agents.core.limits import check_listing_first
from helix_agents.core.models import SessionSummary

from . import _json
from ._base import StoreBase, big
from ._refusals import Snapshot, refuse

__all__ = ["SessionsMixin"]


class SessionsMixin(StoreBase):
    """The session operations; each is one statement or one server-side call."""

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        self._ensure_open("create_session", session_id)
        sid, meta = check_new_session(session_id, user_id, metadata)
        now = self._clock()
        info = SessionInfo(
            id=sid,
            user_id=user_id,
            created_at=now,
            last_activity_at=now,
            message_count=0,
            metadata=meta,
        )
        rows = await self._rows(
            self._sql.create,
            (sid, user_id, now, now, _json.dumps(meta)),
            what="create_session",
            session_id=sid,
            write=True,
        )
        if not rows:
            raise SessionExistsError(f"session {sid!r} exists", session_id=sid)
        return info

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        self._open_session("get_session", session_id)
        rows = await self._rows(
            self._sql.session, (session_id,), what="get_session", session_id=session_id
        )
        return _info(rows[0][0]) if rows else None

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds."""
        self._open_session("delete_session", session_id)
        rows = await self._rows(
            self._sql.delete,
            (session_id,),
            what="delete_session",
            session_id=session_id,
            write=True,
        )
        return bool(rows[0][0])

    async def clear_session(self, session_id: str) -> None:
        """Drop rows and queues; keep the session, its user and metadata; cancel a live run."""
        self._open_session("clear_session", session_id)
        doc = await self._call(
            self._sql.clear,
            (session_id, self._clock()),
            what="clear_session",
            session_id=session_id,
        )
        if "refused" in doc:
            refuse(session_id, doc)

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        self._open_session("clone_session", source_id)
        bad_target: ValidationError | None = None
        try:
            target = new_session_id(target_id, "target_id")
        except ValidationError as exc:
            bad_target, target = exc, ""

        def check_up_to(snap: Snapshot) -> None:
            end = snap.message_count if up_to is None else up_to
            check_limit(source_id, "up_to", end, snap.first_index, snap.message_count)

        def exists(_: Snapshot) -> None:
            raise SessionExistsError(f"session {target!r} exists", session_id=target)

        if (
            bad_target is not None
            or isinstance(up_to, bool)
            or not (up_to is None or isinstance(up_to, int))
        ):
            count, _, first = await self._counts(source_id, "clone_session")
            check_up_to(Snapshot(count, first, None))
            assert bad_target is not None  # check_up_to refused any other up_to
            raise bad_target
        doc = await self._call(
            self._sql.clone,
            (source_id, target, None if up_to is None else big(up_to), self._clock()),
            what="clone_session",
            session_id=source_id,
        )
        if "refused" in doc:
            refuse(source_id, doc, check_up_to, exists)
        return _info(doc)

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id."""
        self._ensure_open("list_sessions", None)
        check_id(user_id, "user_id")
        check_listing_first(first)
        at, after = (None, None) if cursor is None else decode_sessions_cursor(user_id, cursor)
        rows = await self._rows(
            self._sql.sessions,
            {"user": user_id, "at": at, "id": after, "limit": first + 1},
            what="list_sessions",
            session_id=None,
        )
        page = [
            SessionSummary(
                id=sid,
                created_at=created,
                last_activity_at=active,
                message_count=count,
                pending_approvals=pending,
            )
            for sid, created, active, count, pending in rows[:first]
        ]
        next_cursor = None
        if len(rows) > first:
            last = page[-1]
            next_cursor = encode_sessions_cursor(user_id, last.last_activity_at, last.id)
        return SessionsPage(sessions=tuple(page), next_cursor=next_cursor)


def _info(doc: Any) -> SessionInfo:
    data = json.loads(doc) if isinstance(doc, str) else dict(doc)
    data["metadata"] = _json.loads(data["metadata"])
    return SessionInfo.model_validate(data)
