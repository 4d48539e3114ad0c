"""``HelixSessionService``: ADK's ``BaseSessionService`` over any ``SessionStateStore``."""

from __future__ import annotations

import contextlib
import hashlib
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
    JsonObject,
    Message,
    MessageCommit,
    MessageCountConflictError,
    ScopedStateDelta,
    SessionExistsError,
    SessionInfo,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.adapters import check_writable, mark, readable
from helix_agents.core.inputs import check_id

from . import _names
from ._checks import event_json, refusing, state_deltas, without_temp
from ._events import event_of, row_of
from ._usage import usage_of_event

__all__ = ["HelixSessionService"]

_PAGE = 500


class HelixSessionService(BaseSessionService):
    """ADK sessions on a helix-agents store: events are rows, state is scoped state.

    The store stays the caller's: the service neither opens nor closes it. Each event
    is one commit carrying its row and its ``app:``, ``user:`` and session state delta,
    with the row count the session object last saw as ``expect_message_count``:
    a session object that another writer has moved past raises ADK's
    ``StaleSessionError``, and nothing of the event is written.

    Sessions it creates carry the ``adk`` mark (ADP-1); another adapter's sessions are
    missing to its reads and refuse its writes with ``ForeignSessionError`` (ADP-2).
    Events and states that would not come back equal are refused with
    :class:`~helix_agents.adk.errors.AdkValidationError` before anything is written.
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
        """Create a session with its initial state; an existing id is ``AlreadyExistsError``.

        The state is checked before the session is created: a refused state leaves none.
        An id another adapter's session holds is its ``ForeignSessionError``.
        """
        session_id = session_id or str(uuid.uuid4())
        _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id)
        sid = _names.store_session_id(app_name, user_id, session_id)
        deltas = state_deltas(sid, app_name, user_id, state or {}, "state")
        # The app's map of users makes app-wide listings possible (list_sessions).
        deltas.append(
            ScopedStateDelta(
                scope="app",
                owner=_names.registry_owner(app_name),
                changes={_names.user_key(user_id): True},
            )
        )
        metadata: JsonObject = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        with refusing():
            try:
                await self.store.create_session(
                    sid,
                    user_id=_names.store_user_id(app_name, user_id),
                    metadata=mark("adk", metadata),
                )
            except SessionExistsError:
                info = await self.store.get_session(sid)
                if info is not None:
                    check_writable(info, "adk")
                raise AlreadyExistsError(f"Session with id {session_id} already exists.") from None
            try:
                result = await self.store.append_messages(
                    sid, MessageCommit(expect_message_count=0, scoped_state=tuple(deltas))
                )
            except BaseException:
                # Checked above, so only a fault lands here: the session goes too.
                with contextlib.suppress(Exception):
                    await self.store.delete_session(sid)
                raise
            info = await self.store.get_session(sid)
            if info is None:  # deleted at once by another caller
                raise AdkNotFoundError(f"Session {session_id} not found.")
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
        _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id)
        sid = _names.store_session_id(app_name, user_id, session_id)
        with refusing():
            info = await self.store.get_session(sid)
            if info is None or not readable(info, "adk"):
                return None
            # The count is read before the events: a row landing in between makes the
            # session look older than it is (the next append is refused as stale), never newer.
            try:
                events = await self._events(sid, info.message_count, config)
            except SessionNotFoundError:
                return None
            session = await self._session(app_name, user_id, session_id, info, events)
        _set_marker(session, info.message_count)
        return session

    async def _events(self, sid: str, count: int, config: GetSessionConfig | None) -> list[Event]:
        recent = None if config is None else config.num_recent_events
        after = None if config is None else config.after_timestamp
        if recent == 0:
            return []
        if after is None:
            rows = await self.store.get_messages(sid, limit=recent)
            first = 0 if recent is None else max(count - len(rows), 0)
            events = (self._event_of(row, sid, first + i) for i, row in enumerate(rows))
            return [e for e in events if e is not None]
        # Newest first, page by page, down to the first event older than ``after``.
        newest: list[Event] = []
        cursor: str | None = None
        seen = 0
        while True:
            page = await self.store.page_messages(sid, limit=_PAGE, cursor=cursor, order="desc")
            for row in page.messages:
                seen += 1
                event = self._event_of(row, sid, count - seen)
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
        _names.check_names(app_name=app_name, user_id=user_id or "")
        with refusing():
            return await self._list(app_name, user_id)

    async def _list(self, app_name: str, user_id: str | None) -> ListSessionsResponse:
        if user_id is None:
            users = await self.store.get_scoped_state("app", _names.registry_owner(app_name))
            # Keys the service did not write (made through the store) name no user.
            user_ids = [user for user in map(_names.user_of, users) if user is not None]
            user_ids = [user for user in user_ids if _is_id(_names.store_user_id(app_name, user))]
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
        session_id = _names.adk_session_id(sid, app_name, user_id)
        if session_id is None:  # made through the store under the same owner
            return None
        info = await self.store.get_session(sid)
        if info is None or not readable(info, "adk"):  # deleted since, or another adapter's
            return None
        try:
            own = await self.store.get_scoped_state("session", sid)
        except SessionNotFoundError:
            return None
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=_merged(own, app_state, user_state),
            events=[],
            last_update_time=info.last_activity_at.timestamp(),
        )

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events; ``app:`` and ``user:`` state stay.

        Another adapter's session is its ``ForeignSessionError``, and stays.
        """
        _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id)
        sid = _names.store_session_id(app_name, user_id, session_id)
        with refusing():
            info = await self.store.get_session(sid)
            if info is None:
                return
            check_writable(info, "adk")
            await self.store.delete_session(sid)

    @override
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state, keys without the prefix."""
        _names.check_names(app_name=app_name, user_id=user_id)
        with refusing():
            owner = _names.store_user_id(app_name, user_id)
            return await self.store.get_scoped_state("user", owner)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event and its state delta in one commit, then apply both to ``session``.

        A partial event is returned untouched; ``temp:`` state reaches ``session`` only.
        An equal event sent again (a retry) lands once. An event that would not come
        back equal is an :class:`~helix_agents.adk.errors.AdkValidationError`, with
        nothing written and ``session`` untouched.
        """
        if event.partial:
            return event
        _names.check_names(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id
        )
        sid = _names.store_session_id(session.app_name, session.user_id, session.id)
        kept = without_temp(event.actions.state_delta or {})
        stored = event.model_copy(
            update={"actions": event.actions.model_copy(update={"state_delta": kept})}
        )
        # The delta first: its refusals say more than the event's (and ADK logs none).
        deltas = state_deltas(
            sid, session.app_name, session.user_id, kept, "event.actions.state_delta"
        )
        text = event_json(stored, sid)
        expected = _marker(session)
        with refusing():
            if expected is None:
                # A session object built by hand: nothing says whose session it is.
                info = await self.store.get_session(sid)
                if info is None:
                    raise AdkNotFoundError(f"Session {session.id} not found.")
                check_writable(info, "adk")
                expected = len(session.events)
            row = row_of(stored, text)
            commit = MessageCommit(
                messages=(row,),
                expect_message_count=expected,
                fence_run_id=self._fence_of(session),
                # An equal event (same JSON) is the same commit: a retry replays, not doubles.
                commit_id="adk-" + hashlib.sha256(row.model_dump_json().encode()).hexdigest(),
                scoped_state=tuple(deltas),
                usage=usage_of_event(event),  # ADKF-10: counted with the event, once
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
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        if result.replayed:
            return event
        _set_marker(session, result.message_count)
        session.last_update_time = max(session.last_update_time, event.timestamp, time.time())
        return self._commit_event_to_session(session, event)

    def _event_of(self, row: Message, sid: str, index: int) -> Event | None:
        """The event a read shows for row ``index``: :func:`event_of` here."""
        return event_of(row, sid, index)

    def _fence_of(self, session: Session) -> str | None:
        """The run an event of ``session`` is fenced by: none here."""
        return None

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


def _merged(
    own: dict[str, Any], app_state: dict[str, Any], user_state: dict[str, Any]
) -> dict[str, Any]:
    merged = dict(own)
    merged.update((State.APP_PREFIX + k, v) for k, v in app_state.items())
    merged.update((State.USER_PREFIX + k, v) for k, v in user_state.items())
    return merged


def _is_id(name: str) -> bool:
    try:
        check_id(name, "owner")
    except ValidationError:
        return False
    return True


def _set_marker(session: Session, message_count: int) -> None:
    # ADK's own revision marker: the store's row count when the session was last in step.
    session._storage_update_marker = str(message_count)


def _marker(session: Session) -> int | None:
    """The row count the session object last saw, or ``None`` for one built by hand.

    Only a session this service read or wrote has the marker, so it was checked then
    (ADP-2); another service's marker is not a count and counts as none.
    """
    marker = session._storage_update_marker
    return int(marker) if marker is not None and marker.isascii() and marker.isdigit() else None
