"""``list_sessions``: a user's sorted-set index, checked against the sessions themselves.

The index holds ``-last_activity_at`` (µs) per session id, so ascending order is
newest first, ties by id. Entries whose session is gone (deleted while a second
step was lost, or expired by the idle TTL) are skipped and pruned; an entry
behind its session's real activity time (cluster only, after a lost second
step) is moved to its real place once a page has shown it.
"""

from __future__ import annotations

from typing import Any

import pydantic
from redis.asyncio import Redis, RedisCluster

from helix_agents.core import SessionsPage
from helix_agents.core.backend import check_id, decode_sessions_cursor, encode_sessions_cursor
from helix_agents.core.limits import check_listing_first
from helix_agents.core.models import SessionSummary

from ._base import StoreBase
from ._codec import from_micros, micros, text
from ._errors import DRIVER_ERRORS, driver_error
from ._keys import summaries_of

__all__ = ["ListingMixin"]

_Entry = tuple[str, int]  # (session id, index score)
# An index entry with its summary from beside the index (standalone; None: read the session).
_Listed = tuple[str, int, list[str] | None]
_Fields = dict[str, Any]  # a SessionSummary's fields
_SUMMARIES = pydantic.TypeAdapter(list[SessionSummary])


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
                for (sid, score, _), summary in zip(
                    batch, await self._summaries(batch, user_id), strict=True
                ):
                    if summary is None:
                        stale.append((sid, score))
                        continue
                    found.append((summary, score))
                if exhausted or not batch:
                    break
                position = batch[-1][:2]
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
    ) -> tuple[list[_Listed], bool]:
        """Up to ``need`` index entries after ``position``; and whether the index ends there."""
        client, scripts = self._live()
        if not self.cluster:
            score = "" if position is None else position[1]
            keys = [ukey, summaries_of(ukey)]
            reply = await scripts.run("r_index", keys, [need, score])
            replies = _split_index(reply, None if position is None else position[1])
        else:
            pairs = await self._index_pipeline(client, ukey, position, need)
            replies = [[(text(m), int(s), None) for m, s in pairs_] for pairs_ in pairs]
        rest = replies[-1]
        ties = [] if position is None else [e for e in replies[0] if e[0] > position[0]]
        candidates = ties + rest
        return candidates[:need], len(candidates) <= need and len(rest) < need

    @staticmethod
    async def _index_pipeline(
        client: Redis | RedisCluster, ukey: str, position: _Entry | None, need: int
    ) -> list[Any]:
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
        return replies

    async def _summaries(self, batch: list[_Listed], user_id: str) -> list[SessionSummary | None]:
        """Each session's summary, or ``None`` where it is gone or not the user's: from
        beside the index where the index had one, else read from the sessions."""
        read = iter(await self._read(user_id, [sid for sid, _, known in batch if known is None]))
        fields = [next(read) if known is None else _fields(sid, *known) for sid, _, known in batch]
        # One validation for the page: much cheaper than a constructor call per session.
        built = iter(_SUMMARIES.validate_python([f for f in fields if f is not None]))
        return [None if f is None else next(built) for f in fields]

    async def _read(self, user_id: str, sids: list[str]) -> list[_Fields | None]:
        if not sids:
            return []
        client, scripts = self._live()
        keys = self.options.keys
        if not self.cluster:
            # One read script on a standalone server; a cluster's sessions lie in many slots.
            named = [k for sid in sids for k in (keys.meta(sid), keys.approvals(sid))]
            reply = text(await scripts.run("r_list", named, [user_id]))
            return [
                None if row == "-" else _fields(sid, *row.split(","))
                for sid, row in zip(sids, reply.split(" "), strict=True)
            ]
        pipe = client.pipeline(transaction=False)
        for sid in sids:
            pipe.hmget(keys.meta(sid), ["created", "la", "count", "user"])
            pipe.hlen(keys.approvals(sid))
        replies = text(await pipe.execute())
        out: list[_Fields | None] = []
        for i, sid in enumerate(sids):
            (created, la, count, owner), pending = replies[2 * i], replies[2 * i + 1]
            if created is None or owner != user_id:
                out.append(None)
                continue
            out.append(_fields(sid, created, la, count, pending))
        return out


def _fields(sid: str, created: Any, la: Any, count: Any, pending: Any) -> _Fields:
    return {
        "id": sid,
        "created_at": from_micros(created),
        "last_activity_at": from_micros(la),
        "message_count": int(count),
        "pending_approvals": int(pending),
    }


def _split_index(reply: Any, tie_score: int | None) -> list[list[_Listed]]:
    """``r_index``'s NUL-joined string as its ties (at ``tie_score``) and the rest; a
    summary counts only while its session lives and it is as new as the index entry
    (same activity time)."""
    fields = text(reply).split("\0")
    ties = int(fields[-3])
    now = int(fields[-2]) * 1000 + int(fields[-1]) // 1000  # the server's ms
    pairs = 2 * ((len(fields) - 3 - 2 * ties) // 3)  # the rest's: 2 fields and a summary each
    rest = fields[:pairs]
    sids = fields[pairs : pairs + ties] + rest[0::2]
    tied = [] if tie_score is None else [tie_score] * ties
    scores = tied + [int(float(s)) for s in rest[1::2]]
    listed: list[_Listed] = []
    for sid, score, text_ in zip(sids, scores, fields[pairs + ties : -3], strict=True):
        summary = text_.split(",") if text_ else None
        if summary is not None:
            deadline = int(summary[0])
            if (deadline and deadline <= now) or int(summary[2]) != -score:
                summary = None
        listed.append((sid, score, None if summary is None else summary[1:]))
    return [listed[:ties], listed[ties:]]
