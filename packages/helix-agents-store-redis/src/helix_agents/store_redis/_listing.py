"""``list_sessions``: a user's sorted-set index, checked against the sessions themselves.

The index holds ``-last_activity_at`` (µs) per session id, so ascending order is
newest first, ties by id. Entries whose session is gone (deleted while a second
step was lost, or expired by the idle TTL) are skipped and pruned; an entry
behind its session's real activity time (cluster only, after a lost second
step) is moved to its real place once a page has shown it.
"""

from __future__ import annotations

from typing import Any

from helix_agents.core import SessionsPage, SessionSummary
from helix_agents.core.backend import check_id, decode_sessions_cursor, encode_sessions_cursor
from helix_agents.core.limits import check_listing_first

from ._base import StoreBase
from ._codec import from_micros, micros, text
from ._errors import DRIVER_ERRORS, driver_error

__all__ = ["ListingMixin"]

_Entry = tuple[str, int]  # (session id, index score)


class ListingMixin(StoreBase):
    """The per-user listing of :class:`RedisStateStore`."""

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id."""
        self._live()
        check_id(user_id, "user_id")
        check_listing_first(first)
        after = None if cursor is None else decode_sessions_cursor(user_id, cursor)
        ukey = self.options.keys.user(user_id)
        position = None if after is None else (after[1], -micros(after[0]))
        found: list[tuple[SessionSummary, int]] = []
        stale: list[_Entry] = []
        try:
            while len(found) <= first:
                batch, exhausted = await self._index_batch(ukey, position, first + 1 - len(found))
                for (sid, score), summary in zip(
                    batch, await self._summaries(batch, user_id), strict=True
                ):
                    if summary is None:
                        stale.append((sid, score))
                        continue
                    found.append((summary, score))
                if exhausted or not batch:
                    break
                position = batch[-1]
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False) from exc
        for sid, score in stale:
            await self._index("index_drop", ukey, [sid, score])
        page = found[:first]
        # Only entries shown on this page move: they go before the cursor, so a walk
        # through the pages neither repeats them nor skips anything else.
        for summary, score in page:
            la = micros(summary.last_activity_at)
            if la != -score:
                await self._index(
                    "index_set", ukey, [summary.id, -la, "LT", self.options.idle_ttl_ms]
                )
        next_cursor = None
        if len(found) > first:
            last, score = page[-1]
            next_cursor = encode_sessions_cursor(user_id, from_micros(-score), last.id)
        return SessionsPage(sessions=tuple(s for s, _ in page), next_cursor=next_cursor)

    async def _index_batch(
        self, ukey: str, position: _Entry | None, need: int
    ) -> tuple[list[_Entry], bool]:
        """Up to ``need`` index entries after ``position``; and whether the index ends there."""
        client, _ = self._live()
        pipe = client.pipeline(transaction=False)
        if position is None:
            pipe.zrange(ukey, "-inf", "+inf", byscore=True, offset=0, num=need, withscores=True)
        else:
            score = position[1]
            pipe.zrange(ukey, score, score, byscore=True, withscores=True)
            pipe.zrange(
                ukey, f"({score}", "+inf", byscore=True, offset=0, num=need, withscores=True
            )
        replies: list[Any] = await pipe.execute()
        rest = _entries(replies[-1])
        ties = [] if position is None else [e for e in _entries(replies[0]) if e[0] > position[0]]
        candidates = ties + rest
        return candidates[:need], len(candidates) <= need and len(rest) < need

    async def _summaries(self, batch: list[_Entry], user_id: str) -> list[SessionSummary | None]:
        """Each session's summary, or ``None`` where it is gone or not the user's."""
        if not batch:
            return []
        client, _ = self._live()
        keys = self.options.keys
        pipe = client.pipeline(transaction=False)
        for sid, _ in batch:
            pipe.hmget(keys.meta(sid), ["created", "la", "count", "user"])
            pipe.hlen(keys.approvals(sid))
        replies = text(await pipe.execute())
        out: list[SessionSummary | None] = []
        for i, (sid, _) in enumerate(batch):
            (created, la, count, owner), pending = replies[2 * i], replies[2 * i + 1]
            if created is None or owner != user_id:
                out.append(None)
                continue
            out.append(
                SessionSummary(
                    id=sid,
                    created_at=from_micros(created),
                    last_activity_at=from_micros(la),
                    message_count=int(count),
                    pending_approvals=int(pending),
                )
            )
        return out


def _entries(reply: list[Any]) -> list[_Entry]:
    return [(text(member), int(score)) for member, score in reply]
