"""A user's listing index: one sorted set under the user's own hash tag, session id ->
-``last_activity_at`` in µs (ascending = newest first, ties by id, as core wants).

On standalone Redis lua/apply.lua moves a session's entry in the write itself; on a
cluster the index lives in another slot, so :meth:`Listing.move` follows the landed
write (docs/backends/redis.md, "The listing on a Redis Cluster"). A page reads the
index, then each listed session's own ``meta`` and approvals, in one pipeline.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from helix_agents.core import StoreUnavailableError
from helix_agents.core.models import ListedSession

from ._codec import from_micros, micros, text
from ._errors import DRIVER_ERRORS, driver_error

if TYPE_CHECKING:
    from ._engine import RedisEngine

__all__ = ["EveryIndex", "Listing"]

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
    ) -> list[ListedSession]:
        """Up to ``limit`` of the user's sessions after ``after``. Entries whose session is
        gone or another user's are skipped, and removed after the walk (sooner would shift
        its offsets); one behind its session's activity (a cluster's lost second step) is
        moved to its place once shown: the last of a full page is the next page's first."""
        ukey = self.engine.keys.user(user_id)
        low = float("-inf") if after is None else float(-micros(after[0]))
        page: list[ListedSession] = []
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
    ) -> tuple[list[ListedSession], list[tuple[str, int]], list[Entry]]:
        """The summaries of the listed sessions that are the user's; those whose entry is
        behind their activity; the entries of sessions gone or not the user's."""
        if not listed:
            return [], [], []
        keys = self.engine.keys
        try:
            async with self.engine.client.pipeline(transaction=False) as pipe:
                for session_id, _ in listed:
                    pipe.hmget(keys.meta(session_id), "user", "created", "la", "count", "md")
                    pipe.hlen(keys.session(session_id, ("appr",))[0])
                found = await pipe.execute()
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.engine.where) from exc
        page, behind, gone = [], [], []
        for i, (session_id, score) in enumerate(listed):
            fields: list[Any] = text(found[2 * i])
            user, created, la, count, md = fields
            if user != user_id:
                gone.append((session_id, score))
                continue
            if -int(la) != score:
                behind.append((session_id, int(la)))
            summary = ListedSession(  # with the metadata: core decides expiry on it
                id=session_id,
                user_id=user,
                created_at=from_micros(created),
                last_activity_at=from_micros(la),
                message_count=int(count),
                pending_approvals=int(found[2 * i + 1]),
                metadata=json.loads(md),
            )
            page.append(summary)
        return page, behind, gone


class EveryIndex:
    """The store-wide index (:attr:`KeySpace.every`): every session id at score 0 in one
    sorted set, read by ``ZRANGEBYLEX`` (byte order). lua/apply.lua adds and removes an
    entry with the session's create and delete on standalone Redis; on a cluster, where
    the index lives in its own slot, :meth:`add` and :meth:`drop` follow them. It has no
    TTL: entries whose session is gone (idle expiry, a lost second step) are skipped and
    pruned when a page reads them."""

    def __init__(self, engine: RedisEngine) -> None:
        self.engine = engine
        self.key = engine.keys.every

    async def add(self, session_id: str) -> None:
        """List a session created on a cluster (its second step)."""
        try:
            await self.engine.client.zadd(self.key, {session_id: 0})
        except DRIVER_ERRORS as exc:
            log.warning("store-wide index: adding %r failed after its create: %s", session_id, exc)

    async def drop(self, session_id: str) -> None:
        """Unlist a session deleted on a cluster; if this fails, a read prunes it."""
        try:
            await self.engine.client.zrem(self.key, session_id)
        except DRIVER_ERRORS as exc:
            log.warning("store-wide index: dropping %r failed: %s", session_id, exc)

    async def page(self, after_id: str | None, limit: int) -> list[ListedSession]:
        """Up to ``limit`` live sessions after ``after_id`` by id, reading on past gone ones."""
        low = "-" if after_id is None else "(" + after_id
        page: list[ListedSession] = []
        gone: list[str] = []
        while len(page) < limit:
            asked = limit - len(page)
            try:
                found = await self.engine.client.zrangebylex(self.key, low, "+", 0, asked)
            except DRIVER_ERRORS as exc:
                raise driver_error(exc, None, write=False, where=self.engine.where) from exc
            ids: list[str] = [text(m) for m in found]
            for session_id, fields, pending in await self._read(ids):
                user, created, la, count, md = fields
                if created is None:
                    gone.append(session_id)
                    continue
                listed = ListedSession(
                    id=session_id,
                    user_id=user,
                    created_at=from_micros(created),
                    last_activity_at=from_micros(la),
                    message_count=int(count),
                    pending_approvals=int(pending),
                    metadata=json.loads(md),
                )
                page.append(listed)
            if len(ids) < asked:
                break
            low = "(" + ids[-1]
        if gone:
            await self._prune(gone)
        return page

    async def _read(self, ids: list[str]) -> list[tuple[str, Any, Any]]:
        if not ids:
            return []
        keys = self.engine.keys
        try:
            async with self.engine.client.pipeline(transaction=False) as pipe:
                for session_id in ids:
                    pipe.hmget(keys.meta(session_id), "user", "created", "la", "count", "md")
                    pipe.hlen(keys.session(session_id, ("appr",))[0])
                found = await pipe.execute()
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.engine.where) from exc
        return [(sid, text(found[2 * i]), found[2 * i + 1]) for i, sid in enumerate(ids)]

    async def _prune(self, gone: list[str]) -> None:
        """Remove the entries of sessions gone, then put back any created again meanwhile
        (its create's own entry may have landed before this removal)."""
        keys = self.engine.keys
        try:
            await self.engine.client.zrem(self.key, *gone)
            async with self.engine.client.pipeline(transaction=False) as pipe:
                for session_id in gone:
                    pipe.exists(keys.meta(session_id))
                back = await pipe.execute()
            alive = [sid for sid, n in zip(gone, back, strict=True) if n]
            if alive:
                await self.engine.client.zadd(self.key, dict.fromkeys(alive, 0))
        except DRIVER_ERRORS as exc:
            log.warning("store-wide index: pruning %s failed: %s", gone, exc)
