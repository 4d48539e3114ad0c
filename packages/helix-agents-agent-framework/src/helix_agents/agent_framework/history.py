"""``HelixHistoryProvider``: an Agent Framework ``HistoryProvider`` on a session store.

Give it to an agent (``Agent(client, context_providers=[provider])``): before a run it
loads the session's messages, after it saves the run's input and response in one commit
that fails if another run saved to the session since the load
(docs/integrations/agent-framework.md, MAF-1..MAF-12).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from agent_framework import AgentSession, HistoryProvider, Message, SessionContext

from helix_agents.core import (
    MessageCommit,
    MessageCountConflictError,
    SessionInfo,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.adapters import AdapterName, claim_session, readable
from helix_agents.core.inputs import check_id

from ._replay import new_messages
from ._rows import decode_row, encode_messages
from ._usage import USAGE_KEY, usage_of_response

if TYPE_CHECKING:
    from agent_framework import SupportsAgentRun

__all__ = ["ADAPTER", "COUNT_KEY", "HelixHistoryProvider"]

ADAPTER: AdapterName = "agent-framework"
"""The mark of the sessions ``HelixHistoryProvider`` creates (ADP-1)."""

COUNT_KEY: Final = "helix.message_count"
"""The key of ``state`` that holds the session's row count as of the last load or save."""


def _conflict(
    session_id: str, expected: int | None, actual: int | None, why: str
) -> MessageCountConflictError:
    return MessageCountConflictError(
        f"session {session_id!r}: {why} ({expected} rows expected, {actual} found); "
        "load and run again",
        session_id=session_id,
        expected=expected,
        actual=actual,
    )


class HelixHistoryProvider(HistoryProvider):
    """The conversation history of each session id in ``store`` (never closed here).

    ``user_id`` owns the sessions the provider creates. The flags are the framework's
    (``load_messages``, ``store_inputs``, ``store_outputs``, ``store_context_messages``,
    ``store_context_from``).
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "helix_history"

    def __init__(
        self,
        store: SessionStateStore,
        *,
        user_id: str | None = None,
        source_id: str | None = None,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: set[str] | None = None,
        store_outputs: bool = True,
    ) -> None:
        super().__init__(
            source_id or self.DEFAULT_SOURCE_ID,
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_context_messages=store_context_messages,
            store_context_from=store_context_from,
            store_outputs=store_outputs,
        )
        self.store = store
        self.user_id = check_id(user_id, "user_id", optional=True)

    # Within an agent run, the count goes from the load to the save through the run's own
    # context, so two runs on one AgentSession object cannot take each other's (MAF-7).
    def _run_state(self, context: SessionContext) -> dict[str, Any]:
        key = f"helix.{self.source_id}"
        run = context.metadata.get(key)
        if not isinstance(run, dict):
            run = context.metadata[key] = {}
        return run

    async def before_run(
        self,
        *,
        agent: SupportsAgentRun,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        """Load the history into the run's context (MAF-4)."""
        run = self._run_state(context)
        await super().before_run(agent=agent, session=session, context=context, state=run)

    async def after_run(
        self,
        *,
        agent: SupportsAgentRun,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        """Save the run's messages, if no other run saved since this run's load (MAF-7),
        with the run's token usage (MAF-12)."""
        run = self._run_state(context)
        run[USAGE_KEY] = usage_of_response(context.response)
        await super().after_run(agent=agent, session=session, context=context, state=run)

    async def _rows(self, session_id: str, info: SessionInfo | None) -> list[Message]:
        if info is None or not readable(info, ADAPTER) or info.message_count == 0:
            return []
        rows = await self.store.get_messages(session_id)
        return [m for row in rows if (m := decode_row(row, session_id)) is not None]

    async def _tail(self, session_id: str, info: SessionInfo, size: int) -> list[Message]:
        # What the replay rule compares a save of ``size`` messages with: the stored history,
        # or only its last ``size`` messages when it is longer (all the rule then looks at),
        # read as a tail when those rows are all this adapter's (MAF-6).
        if readable(info, ADAPTER) and info.message_count > size:
            rows = await self.store.get_messages(session_id, limit=size)
            tail = [decode_row(row, session_id) for row in rows]
            if len(tail) == size and all(m is not None for m in tail):
                return [m for m in tail if m is not None]
        return await self._rows(session_id, info)

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """The session's messages, oldest first (empty for a missing or foreign session);
        its row count goes into ``state`` for the next save (MAF-1, MAF-7)."""
        sid = check_id(session_id, "session_id")
        info = await self.store.get_session(sid)
        # The count first: a row appended after it makes the next save conflict (MAF-5).
        messages = await self._rows(sid, info)
        if state is not None:
            state[COUNT_KEY] = 0 if info is None else info.message_count
        return messages

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append ``messages`` in one commit (those a replayed transcript repeats, once).

        With a count in ``state`` (from a load or an earlier save), raises
        ``MessageCountConflictError`` if another writer saved since, writing nothing.
        ``ForeignSessionError`` for another adapter's session, ``MessageNotStorableError``
        for a message that would not come back equal (MAF-3, MAF-6, MAF-7, MAF-9).
        """
        sid = check_id(session_id, "session_id")
        rows = encode_messages(messages, sid)  # every message checked before any read or write
        if not rows:
            return
        expected = None if state is None else state.get(COUNT_KEY)
        if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int)):
            raise ValidationError(
                f"session {sid!r}: state[{COUNT_KEY!r}] is {expected!r}, not a row count",
                session_id=sid,
            )
        info = await self.store.get_session(sid)
        actual = 0 if info is None else info.message_count
        if expected is not None and expected != actual:
            why = "deleted since" if info is None else "another run saved since"
            raise _conflict(sid, expected, actual, f"{why} this history was loaded")
        info = await claim_session(self.store, sid, ADAPTER, user_id=self.user_id, info=info)
        if info is None:
            raise _conflict(sid, actual, 0, "deleted while saving")
        # The count the commit holds to: the load's, else the one just read (MAF-7).
        count = info.message_count if expected is None else expected
        fresh = new_messages(await self._tail(sid, info, len(messages)), messages)
        if not fresh:
            return
        # What is new is always the end of the save: its rows are the last ones.
        commit = MessageCommit(
            messages=tuple(rows[-len(fresh) :]),
            expect_message_count=count,
            usage=() if state is None else state.pop(USAGE_KEY, ()),  # the run's (MAF-12)
        )
        try:
            result = await self.store.append_messages(sid, commit)
        except MessageCountConflictError as exc:
            raise _conflict(
                sid, exc.expected, exc.actual, "another run saved while this one saved"
            ) from exc
        if state is not None:
            state[COUNT_KEY] = result.message_count
