"""``HelixSessionService``: ADK's ``BaseSessionService`` over any ``SessionStateStore``."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError as AdkNotFoundError
from google.adk.events.event import Event
from google.adk.sessions import BaseSessionService, Session, State
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
from typing_extensions import override

from helix_agents.core import (
    MessageCommit,
    MessageCountConflictError,
    ScopedStateDelta,
    SessionExistsError,
    SessionInfo,
    SessionNotFoundError,
    SessionStateStore,
)

from . import _names
from ._events import event_of, json_safe, row_of

__all__ = ["HelixSessionService"]

_PAGE = 500


class HelixSessionService(BaseSessionService):
    """ADK sessions on a helix-agents store: events are rows, state is scoped state.

    The store stays the caller's: the service neither opens nor closes it. Each event
    is one commit carrying its row and its ``app:``, ``user:`` and session state delta,
    with the row count the session object last saw as ``expect_message_count``:
    a session object that another writer has moved past raises ADK's
    ``StaleSessionError``, and nothing of the event is written.
    """

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    @override
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session with its initial state; an existing id is ``AlreadyExistsError``."""
        session_id = session_id or str(uuid.uuid4())
        sid = _names.store_session_id(app_name, user_id, session_id)
        try:
            await self.store.create_session(
                sid,
                user_id=_names.store_user_id(app_name, user_id),
                metadata={"app_name": app_name, "user_id": user_id, "session_id": session_id},
            )
        except SessionExistsError:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.") from None
        deltas = _deltas(app_name, user_id, state or {})
        # The app's map of users makes app-wide listings possible (list_sessions).
        deltas.append(
            ScopedStateDelta(
                scope="app",
                owner=_names.registry_owner(app_name),
                changes={_names.user_key(user_id): True},
            )
        )
        try:
            result = await self.store.append_messages(
                sid, MessageCommit(expect_message_count=0, scoped_state=tuple(deltas))
            )
        except BaseException:
            # Refused state (not JSON, too many keys): the session goes too.
            await self.store.delete_session(sid)
            raise
        info = await self.store.get_session(sid)
        assert info is not None
        session = await self._session(app_name, user_id, session_id, info, [])
        _set_marker(session, result.message_count)
        return session

    @override
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with its events (all, or as ``config`` filters them), or ``None``."""
        sid = _names.store_session_id(app_name, user_id, session_id)
        info = await self.store.get_session(sid)
        if info is None:
            return None
        # The count is read before the events: a row landing in between makes the session
        # look older than it is (the next append is refused as stale), never newer.
        try:
            events = await self._events(sid, config)
        except SessionNotFoundError:
            return None
        session = await self._session(app_name, user_id, session_id, info, events)
        _set_marker(session, info.message_count)
        return session

    async def _events(self, sid: str, config: GetSessionConfig | None) -> list[Event]:
        recent = None if config is None else config.num_recent_events
        after = None if config is None else config.after_timestamp
        if recent == 0:
            return []
        if after is None:
            rows = await self.store.get_messages(sid, limit=recent)
            return [e for e in map(event_of, rows) if e is not None]
        # Newest first, page by page, down to the first event older than ``after``.
        newest: list[Event] = []
        cursor: str | None = None
        while True:
            page = await self.store.page_messages(sid, limit=_PAGE, cursor=cursor, order="desc")
            for row in page.messages:
                event = event_of(row)
                if event is None:
                    continue
                if event.timestamp < after or (recent is not None and len(newest) == recent):
                    return newest[::-1]
                newest.append(event)
            if page.next_cursor is None:
                return newest[::-1]
            cursor = page.next_cursor

    @override
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The user's sessions (every user's, without ``user_id``), oldest update first.

        Sessions come without events, with their merged state; the store is read in
        pages of 500, one user at a time.
        """
        if user_id is None:
            users = await self.store.get_scoped_state("app", _names.registry_owner(app_name))
            user_ids = [_user_of(key) for key in users]
        else:
            user_ids = [user_id]
        app_state = await self.store.get_scoped_state("app", _names.app_owner(app_name))
        sessions: list[Session] = []
        for user in user_ids:
            user_state = await self.store.get_scoped_state(
                "user", _names.store_user_id(app_name, user)
            )
            cursor: str | None = None
            while True:
                page = await self.store.list_sessions(
                    _names.store_user_id(app_name, user), first=_PAGE, cursor=cursor
                )
                for summary in page.sessions:
                    found = await self._listed(app_name, user, summary.id, app_state, user_state)
                    if found is not None:
                        sessions.append(found)
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def _listed(
        self,
        app_name: str,
        user_id: str,
        sid: str,
        app_state: dict[str, Any],
        user_state: dict[str, Any],
    ) -> Session | None:
        info = await self.store.get_session(sid)
        if info is None:  # deleted since the page was read
            return None
        try:
            own = await self.store.get_scoped_state("session", sid)
        except SessionNotFoundError:
            return None
        return Session(
            id=info.metadata["session_id"],
            app_name=app_name,
            user_id=user_id,
            state=_merged(own, app_state, user_state),
            events=[],
            last_update_time=info.last_activity_at.timestamp(),
        )

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events; ``app:`` and ``user:`` state stay."""
        await self.store.delete_session(_names.store_session_id(app_name, user_id, session_id))

    @override
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state, keys without the prefix."""
        return await self.store.get_scoped_state("user", _names.store_user_id(app_name, user_id))

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event and its state delta in one commit, then apply both to ``session``.

        A partial event is returned untouched; ``temp:`` state reaches ``session`` only.
        An equal event sent again (a retry) lands once.
        """
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        row = row_of(event)
        sid = _names.store_session_id(session.app_name, session.user_id, session.id)
        deltas = _deltas(session.app_name, session.user_id, event.actions.state_delta or {})
        commit = MessageCommit(
            messages=(row,),
            expect_message_count=_marker(session),
            # An equal event (same JSON) is the same commit: a retry replays instead of doubling.
            commit_id="adk-" + hashlib.sha256(row.model_dump_json().encode()).hexdigest(),
            scoped_state=tuple(deltas),
        )
        try:
            result = await self.store.append_messages(sid, commit)
        except SessionNotFoundError:
            raise AdkNotFoundError(f"Session {session.id} not found.") from None
        except MessageCountConflictError as exc:
            raise StaleSessionError(
                f"Session {session.id} was changed by another writer since it was read "
                f"({exc}); read it again with get_session."
            ) from exc
        if result.replayed:
            return event
        _set_marker(session, result.message_count)
        session.last_update_time = max(session.last_update_time, event.timestamp, time.time())
        return self._commit_event_to_session(session, event)

    async def _session(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        info: SessionInfo,
        events: list[Event],
    ) -> Session:
        sid = info.id
        state = _merged(
            await self.store.get_scoped_state("session", sid),
            await self.store.get_scoped_state("app", _names.app_owner(app_name)),
            await self.store.get_scoped_state("user", _names.store_user_id(app_name, user_id)),
        )
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=events,
            last_update_time=info.last_activity_at.timestamp(),
        )


def _deltas(app_name: str, user_id: str, state: dict[str, Any]) -> list[ScopedStateDelta]:
    """The ``app:``, ``user:`` and session parts of a state delta (``temp:`` dropped)."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in json_safe(state).items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            own[key] = value
    deltas = []
    if own:
        deltas.append(ScopedStateDelta(scope="session", changes=own))
    if app:
        deltas.append(ScopedStateDelta(scope="app", owner=_names.app_owner(app_name), changes=app))
    if user:
        owner = _names.store_user_id(app_name, user_id)
        deltas.append(ScopedStateDelta(scope="user", owner=owner, changes=user))
    return deltas


def _merged(
    own: dict[str, Any], app_state: dict[str, Any], user_state: dict[str, Any]
) -> dict[str, Any]:
    merged = dict(own)
    merged.update((State.APP_PREFIX + k, v) for k, v in app_state.items())
    merged.update((State.USER_PREFIX + k, v) for k, v in user_state.items())
    return merged


def _user_of(key: str) -> str:
    user: str = json.loads(key)
    return user


def _set_marker(session: Session, message_count: int) -> None:
    # ADK's own revision marker: the store's row count when the session was last in step.
    session._storage_update_marker = str(message_count)


def _marker(session: Session) -> int:
    """The row count the session object last saw; a session built by hand: its events."""
    marker = session._storage_update_marker
    return len(session.events) if marker is None else int(marker)
