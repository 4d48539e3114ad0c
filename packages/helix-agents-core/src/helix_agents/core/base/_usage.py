"""Token and cost usage (docs/lifecycle.md, "Usage"): a session's totals and a user's,
once for every engine."""

from __future__ import annotations

from ..cursors import decode_sessions_cursor, encode_sessions_cursor
from ..inputs import check_id
from ..listing import FILTERED_BATCH
from ..models import UsageTotals, UserUsage
from ..seam import Want
from ..sessiondoc import SessionDoc
from ..usage import usage_of
from ._plumbing import Plumbing

__all__ = ["USAGE_SCAN_BUDGET", "UsageMethods"]

USAGE_SCAN_BUDGET = 1_000
"""The most sessions one ``get_user_usage`` call reads (one head read each)."""


class UsageMethods(Plumbing):
    """Read the usage a session's commits recorded, and sum a user's."""

    async def get_usage(self, session_id: str) -> UsageTotals:
        """The session's usage, per model and overall (USG-2)."""
        return usage_of(SessionDoc((await self._snapshot(session_id)).metadata).own)

    async def get_user_usage(self, user_id: str, *, cursor: str | None = None) -> UserUsage:
        """The usage of the user's sessions summed, newest activity first, at most
        :data:`USAGE_SCAN_BUDGET` sessions per call; ``next_cursor`` continues (USG-5)."""
        self._check_open()
        check_id(user_id, "user_id")
        after = None if cursor is None else decode_sessions_cursor(user_id, cursor)
        total = UsageTotals()
        read = 0
        while read < USAGE_SCAN_BUDGET:
            batch = min(FILTERED_BATCH, USAGE_SCAN_BUDGET - read)
            got = await self.engine.list_sessions(user_id, after, batch)
            for s in got:
                snap = await self.engine.snapshot(s.id, Want())
                if snap is not None:  # deleted since it was listed: nothing to count
                    total += usage_of(SessionDoc(snap.metadata).own)
                after = (s.last_activity_at, s.id)
            read += len(got)
            if len(got) < batch:
                return UserUsage(user_id=user_id, usage=total, sessions=read, next_cursor=None)
        assert after is not None
        return UserUsage(
            user_id=user_id,
            usage=total,
            sessions=read,
            next_cursor=encode_sessions_cursor(user_id, *after),
        )
