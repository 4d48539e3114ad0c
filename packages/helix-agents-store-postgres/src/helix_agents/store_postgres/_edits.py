"""Pop and replace on the Postgres store: one server-side call each (``functions/edits.sql``)."""

from __future__ import annotations

from collections.abc import Sequence

from helix_agents.core import CommitResult, Message
from helix_agents.core.backend import (
    check_pop_count,
    check_replace,
    check_replace_state,
)
from helix_agents.core.messages import dump_message

from . import _json
from ._base import StoreBase, big
from ._refusals import Snapshot, refuse, refuse_fenced

__all__ = ["EditsMixin"]


class EditsMixin(StoreBase):
    """``pop_messages`` and ``replace_messages``; the checks that need no state run first."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows in ONE round trip and return them, oldest first."""
        await self._checked(
            session_id, "pop_messages", lambda: check_pop_count(session_id, count, fence_run_id)
        )
        doc = await self._call(
            self._sql.pop,
            (session_id, count, fence_run_id, self._clock()),
            what="pop_messages",
            session_id=session_id,
        )
        refuse_fenced(session_id, doc, fence_run_id)
        return [_json.parse_row(body) for body in doc["rows"]]

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` rows and
        append ``messages``: ONE round trip."""
        rows = await self._checked(
            session_id,
            "replace_messages",
            lambda: check_replace(session_id, keep, messages, expect_message_count, fence_run_id),
        )
        body = _json.dumps([dump_message(m) for m in rows])
        doc = await self._call(
            self._sql.replace,
            (
                session_id,
                keep,
                body,
                big(expect_message_count),
                fence_run_id,
                self._clock(),
                self.max_messages,
            ),
            what="replace_messages",
            session_id=session_id,
        )
        if "refused" in doc:

            def state_checks(snap: Snapshot) -> None:
                check_replace_state(
                    session_id,
                    keep,
                    expect_message_count,
                    fence_run_id,
                    message_count=snap.message_count,
                    first_index=snap.first_index,
                    current_run=snap.current_run,
                )

            refuse(session_id, doc, state_checks)
        return CommitResult.model_validate(doc)
