"""``HelixHistory``: a pydantic-ai conversation's message history in a session store.

Load before a run, pass :attr:`HelixHistory.messages` as ``message_history=``, save
``result.new_messages()`` after; the save commits only if no other run saved to the
session since the load (docs/integrations/pydantic-ai.md, PAI-1..PAI-8).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage

from helix_agents.core import (
    MessageCommit,
    MessageCountConflictError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.adapters import AdapterName, claim_session, readable
from helix_agents.core.inputs import check_id

from ._rows import decode_row, encode_messages
from ._usage import usage_of_messages

__all__ = ["ADAPTER", "HelixHistory"]

ADAPTER: AdapterName = "pydantic-ai"
"""The mark of the sessions ``HelixHistory`` creates (ADP-1)."""


class HelixHistory:
    """The message history of session ``session_id`` in ``store`` (never closed here).

    ``user_id`` owns the session when the first save creates it.
    """

    def __init__(
        self, store: SessionStateStore, session_id: str, *, user_id: str | None = None
    ) -> None:
        self.session_id = check_id(session_id, "session_id")
        self.user_id = check_id(user_id, "user_id", session_id=session_id, optional=True)
        self.store = store
        self.messages: list[ModelMessage] = []
        """The history as of the last load, with what this object saved since."""
        self._count: int | None = None

    async def load(self) -> list[ModelMessage]:
        """Read the history (empty for a missing or foreign session) and remember its row
        count for the next save (PAI-1, PAI-4)."""
        info = await self.store.get_session(self.session_id)
        if info is None or not readable(info, ADAPTER):
            self.messages, self._count = [], 0 if info is None else info.message_count
            return list(self.messages)
        # The count first: a row appended after it makes the next save conflict (PAI-1).
        count = info.message_count
        rows = await self.store.get_messages(self.session_id)
        self.messages = [m for row in rows if (m := decode_row(row, self.session_id)) is not None]
        self._count = count
        return list(self.messages)

    async def save(self, new_messages: Sequence[ModelMessage]) -> None:
        """Append ``new_messages`` in one commit, if nothing was saved since the load.

        Raises ``MessageCountConflictError`` when another run saved first (the store
        is left as that run left it), ``ForeignSessionError`` for another adapter's
        session, ``MessageNotStorableError`` for a message that would not come back
        equal (PAI-1, PAI-6).
        """
        if self._count is None:
            raise ValidationError(
                f"session {self.session_id!r}: load() the history before save()",
                session_id=self.session_id,
            )
        rows = encode_messages(new_messages, self.session_id)
        if not rows:
            return
        info = await self.store.get_session(self.session_id)
        if info is None and self._count:
            # Deleted since the load: nothing to continue, and nothing is created.
            raise MessageCountConflictError(
                f"session {self.session_id!r}: deleted since this history was loaded "
                f"({self._count} rows expected); load and run again",
                session_id=self.session_id,
                expected=self._count,
                actual=0,
            )
        # Created here, or by another run first: its save, or ours, wins on the count below.
        await claim_session(self.store, self.session_id, ADAPTER, user_id=self.user_id, info=info)
        commit = MessageCommit(
            messages=tuple(rows),
            expect_message_count=self._count,
            usage=usage_of_messages(new_messages),  # counted with the rows (PAI-8)
        )
        try:
            result = await self.store.append_messages(self.session_id, commit)
        except MessageCountConflictError as exc:
            raise MessageCountConflictError(
                f"session {self.session_id!r}: another run saved since this history was "
                f"loaded ({exc.expected} rows expected, {exc.actual} found); load and run again",
                session_id=self.session_id,
                expected=exc.expected,
                actual=exc.actual,
            ) from exc
        self._count = result.message_count
        self.messages = [*self.messages, *new_messages]
