"""A user's listing index: one sorted set under the user's own hash tag, session id ->
-``last_activity_at`` in µs (ascending = newest first, ties by id, as core wants).

On standalone Redis lua/apply.lua moves a session's entry in the write itself; on a
cluster the index lives in another slot, so :meth:`Listing.move` follows the landed
write (docs/backends/redis.md, "The listing on a Redis Cluster"). A page reads the
index, then each listed session's own ``meta`` and approvals, in one pipeline.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from helix_agents.core import StoreUnavailableError
from helix_agents.core.models import SessionSummary

from ._codec import from_micros, micros, text
from ._errors import DRIVER_ERRORS, driver_error

if TYPE_CHECKING:
    from ._engine import RedisEngine

__all__ = ["Listing"]

log = logging.getLogger("helix_agents.store_redis")

Entry = tuple[str, float]
"""A session id and its score in the index."""


class Listing:
    """Pages of a user's index, and the index's own steps (lua/apply.lua's ``index`` and
    ``unlist``); a failed step is logged, never raised: the write it follows landed."""

    def __init__(self, engine: RedisEngine) -> None:
        self.engine = engine

    async def move(self, ukey: str, session_id: str, at: int) -> None:
        """Move the entry to activity ``at`` (µs), never backwards."""
        try:
            args = self.engine.common("index", session_id, str(at))
            await self.engine.run("apply", [ukey], args, session_id)
        except StoreUnavailableError as exc:
            log.warning("listing index of %r failed after the write landed: %s", session_id, exc)

    async def drop(self, ukey: str, entries: Sequence[tuple[str, float | None]]) -> None:
        """Remove entries: each only if it still has the score seen (``None``: any)."""
        ids = [session_id for session_id, _ in entries]
        seen = [v for i, score in entries if score is not None for v in (i, repr(score))]
        try:
            if len(seen) < 2 * len(entries):
                await self.engine.client.zrem(ukey, *ids)
            else:
                await self.engine.run("apply", [ukey], ["unlist", "", "", 0, "0", *seen], None)
        except (*DRIVER_ERRORS, StoreUnavailableError) as exc:
            log.warning("listing index %s: dropping %s failed: %s", ukey, ids, exc)

    async def page(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> list[SessionSummary]:
        """Up to ``limit`` of the user's sessions after ``after``. Entries whose session is
        gone or another user's are skipped, and removed after the walk (sooner would shift
        its offsets); one behind its session's activity (a cluster's lost second step) is
        moved to its place once shown: the last of a full page is the next page's first."""
        ukey = self.engine.keys.user(user_id)
        low = float("-inf") if after is None else float(-micros(after[0]))
        page: list[SessionSummary] = []
        behind: list[tuple[str, int]] = []
        gone: list[Entry] = []
        offset = 0
        while len(page) < limit:
            asked = limit - len(page)
            try:
                entries: list[Any] = await self.engine.client.zrangebyscore(
                    ukey, low, "+inf", start=offset, num=asked, withscores=True
                )
            except DRIVER_ERRORS as exc:
                raise driver_error(exc, None, write=False, where=self.engine.where) from exc
            offset += len(entries)
            listed: list[Entry] = [(text(m), s) for m, s in entries]
            if after is not None:
                listed = [(m, s) for m, s in listed if s != low or m > after[1]]
            found, moved, stale = await self._summaries(user_id, listed)
            page += found
            behind += moved
            gone += stale
            if len(entries) < asked:
                break
        shown = {s.id for s in page[: limit - 1 if len(page) >= limit else limit]}
        for session_id, la in behind:
            if session_id in shown:
                await self.move(ukey, session_id, la)
        if gone:
            await self.drop(ukey, gone)
        return page[:limit]

    async def _summaries(
        self, user_id: str, listed: list[Entry]
    ) -> tuple[list[SessionSummary], list[tuple[str, int]], list[Entry]]:
        """The summaries of the listed sessions that are the user's; those whose entry is
        behind their activity; the entries of sessions gone or not the user's."""
        if not listed:
            return [], [], []
        keys = self.engine.keys
        try:
            async with self.engine.client.pipeline(transaction=False) as pipe:
                for session_id, _ in listed:
                    pipe.hmget(keys.meta(session_id), "user", "created", "la", "count")
                    pipe.hlen(keys.session(session_id, ("appr",))[0])
                found = await pipe.execute()
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.engine.where) from exc
        page, behind, gone = [], [], []
        for i, (session_id, score) in enumerate(listed):
            fields: list[Any] = text(found[2 * i])
            user, created, la, count = fields
            if user != user_id:
                gone.append((session_id, score))
                continue
            if -int(la) != score:
                behind.append((session_id, int(la)))
            summary = SessionSummary(
                id=session_id,
                created_at=from_micros(created),
                last_activity_at=from_micros(la),
                message_count=int(count),
                pending_approvals=int(found[2 * i + 1]),
            )
            page.append(summary)
        return page, behind, gone
