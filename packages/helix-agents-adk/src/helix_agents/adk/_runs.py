"""The plugin's session service: each event fenced by its run, context rows read as events,
a superseded run's tool answers queued as late answers (ADKF-1..ADKF-3)."""

from __future__ import annotations

import dataclasses
import weakref
from datetime import UTC, datetime

from google.adk.events.event import Event
from google.adk.sessions import Session
from google.genai import types
from typing_extensions import override

from helix_agents.core import (
    ContextMessage,
    LateAnswer,
    Message,
    RunSupersededError,
    SessionStateStore,
)
from helix_agents.core.context import ContextStrategy

from . import _names
from ._context import context_event
from .approvals import CONFIRMATION_CALL
from .service import HelixSessionService

__all__ = ["Run", "RunSessionService", "Runs", "session_key", "user_key"]


def session_key(app_name: str, user_id: str, session_id: str) -> str:
    """The store's session id of ADK's session ``(app_name, user_id, session_id)``."""
    _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id)
    return _names.store_session_id(app_name, user_id, session_id)


def user_key(app_name: str, user_id: str) -> str:
    """The store's user of ADK's user ``(app_name, user_id)``: whose sessions
    ``store.list_sessions`` and ``store.get_user_usage`` read (ADKF-10)."""
    _names.check_names(app_name=app_name, user_id=user_id)
    return _names.store_user_id(app_name, user_id)


@dataclasses.dataclass
class Run:
    """One ``Runner.run_async`` invocation as one run of the store."""

    run_id: str
    sid: str
    strategy: ContextStrategy
    confirmations: list[types.FunctionCall] = dataclasses.field(default_factory=list)
    active_sources: list[str] = dataclasses.field(default_factory=list)


class Runs:
    """The live runs of one plugin, by the ADK session object their invocation writes through.

    ADK gives each ``run_async`` its own ``Session`` object, read at its start, and hands
    that object to every callback and to every ``append_event`` of the invocation.
    """

    def __init__(self) -> None:
        self._runs: dict[int, tuple[weakref.ref[Session], Run]] = {}

    def start(self, session: Session, run: Run) -> None:
        """Make ``run`` the run of ``session``'s writes."""
        self._runs[id(session)] = (weakref.ref(session), run)

    def of(self, session: Session) -> Run | None:
        """The run ``session`` writes for, if any."""
        found = self._runs.get(id(session))
        return found[1] if found is not None and found[0]() is session else None

    def end(self, session: Session) -> Run | None:
        """Forget ``session``'s run (and any whose session is gone); return it."""
        run = self.of(session)
        self._runs.pop(id(session), None)
        for key in [k for k, (ref, _) in self._runs.items() if ref() is None]:
            del self._runs[key]
        return run


class RunSessionService(HelixSessionService):
    """``HelixSessionService`` whose writes are fenced by the plugin's runs.

    An event of a session object with a live run commits only while that run is the
    session's current one (else ``RunSupersededError``, nothing written, and its tool
    answers queued as late answers). Reads show each context row as a ``user`` event.
    """

    def __init__(self, store: SessionStateStore, runs: Runs) -> None:
        super().__init__(store)
        self.runs = runs

    @override
    def _fence_of(self, session: Session) -> str | None:
        run = self.runs.of(session)
        return None if run is None else run.run_id

    @override
    def _event_of(self, row: Message, sid: str, index: int) -> Event | None:
        if isinstance(row, ContextMessage):
            return context_event(row, index)
        return super()._event_of(row, sid, index)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event as ``HelixSessionService`` does, fenced by the session's run."""
        try:
            return await super().append_event(session, event)
        except RunSupersededError:
            sid = session_key(session.app_name, session.user_id, session.id)
            await record_late_answers(self.store, sid, event)
            raise


async def record_late_answers(store: SessionStateStore, sid: str, event: Event) -> int:
    """Queue the function responses of ``event`` (a superseded run's) as late answers.

    Each is queued once per call id, unfenced: it belongs to the session, not to the run
    that ended. Returns how many were queued now.
    """
    now = datetime.now(UTC)
    recorded = 0
    for response in event.get_function_responses():
        if response.name == CONFIRMATION_CALL or not response.id:
            continue
        answer = LateAnswer(
            call_id=response.id,
            tool_name=response.name or "unknown",
            output=response.response,
            at=now,
        )
        recorded += (await store.record_late_answer(sid, answer)).recorded
    return recorded
