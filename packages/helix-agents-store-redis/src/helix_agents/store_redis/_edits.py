"""Pop and replace on the Redis store: one Lua script each (lua/pop.lua, lua/replace.lua)."""

from __future__ import annotations

from collections.abc import Sequence

from helix_agents.core import CommitResult, Message
from helix_agents.core.backend import check_pop_count, check_replace, check_replace_state
from helix_agents.core.refusals import raise_refusal

from ._base import StoreBase
from ._codec import pack_row, unpack_rows
from ._errors import SERVER, Refusal
from ._schema import POP, REPLACE

__all__ = ["EditsMixin"]


class EditsMixin(StoreBase):
    """``pop_messages`` and ``replace_messages``; the checks that need no state run first."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows in one script and return them, oldest first."""
        await self._checked(session_id, lambda: check_pop_count(session_id, count, fence_run_id))
        reply = await self._run(
            "pop",
            session_id,
            [
                *self._common(session_id),
                *POP.pack(want=count, fenced=fence_run_id is not None, fence=fence_run_id or ""),
            ],
            write=True,
        )
        if reply[0] == "none":
            return []
        if reply[0] != "ok":
            Refusal.parse(reply).raise_error(session_id, fence_run_id=fence_run_id)
        await self._after(session_id, reply)
        return unpack_rows(reply[3])

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
        append ``messages``, in one script."""

        def check() -> tuple[list[Message], list[str]]:
            parsed = check_replace(session_id, keep, messages, expect_message_count, fence_run_id)
            return parsed, [pack_row(m, session_id) for m in parsed]

        parsed, rows = await self._checked(session_id, check)
        named = REPLACE.pack(
            keep=keep,
            expect=expect_message_count,
            max_messages=self.options.max_messages or 0,
            n=len(rows),
            n_ui=sum(m.role != "context" for m in parsed),
            fenced=fence_run_id is not None,
            fence=fence_run_id or "",
        )
        args = [*self._common(session_id), *named, *rows]
        reply = await self._run("replace", session_id, args, write=True)
        if reply[0] != "ok":
            refusal = Refusal.parse(reply)
            raise_refusal(
                session_id,
                refusal.code,
                [
                    lambda: check_replace_state(
                        session_id,
                        keep,
                        expect_message_count,
                        fence_run_id,
                        message_count=refusal.count,
                        first_index=refusal.first,
                        current_run=refusal.run,
                    )
                ],
                server=SERVER,
            )
        await self._after(session_id, reply)
        return CommitResult(first_index=keep, message_count=keep + len(rows))
