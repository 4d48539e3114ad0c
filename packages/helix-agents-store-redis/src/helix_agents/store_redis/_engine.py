"""``RedisEngine``: core's engine seam on Redis or a Redis Cluster.

A read is one ``EVALSHA`` of lua/read.lua; a write one of lua/apply.lua, which applies
core's changes only if the session is still at the version they were planned on and
otherwise answers with the current snapshot. On a cluster, a landed write on a session
with a user then moves its entry in the user's listing index (another slot).
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import Checkpoint, JsonObject, SessionSummary, StoreUnavailableError
from helix_agents.core.backend import (
    Changes,
    Engine,
    NewSession,
    Refused,
    RowSpan,
    Snapshot,
    Want,
)
from helix_agents.core.seam import head_of

from ._codec import (
    changes_json,
    dump,
    from_micros,
    micros,
    snapshot_of,
    stored_rows,
    text,
    want_json,
)
from ._config import StoreOptions
from ._errors import DRIVER_ERRORS, driver_error
from ._open import open_scripts
from ._scoped import Journal, journal_entry
from ._scripts import Scripts

__all__ = ["RedisEngine"]

log = logging.getLogger("helix_agents.store_redis")

_HEAD = Want()
_WHOLE = Want(rows=RowSpan(0), checkpoints="all")
_USERS_KEPT = 4096
# A write refused because a reader sealed its maps announces itself again; readers
# seal only maps without pending entries, so a few rounds always suffice.
_SEALED_RETRIES = 8


class RedisEngine(Engine):
    """Sessions as hash-tagged keys (one cluster slot each), written by one Lua applier."""

    system = "redis"
    needs_open = True

    def __init__(
        self,
        client: Redis | RedisCluster,
        options: StoreOptions,
        where: str,
        *,
        owns: bool,
        namespace: str | None = None,
    ) -> None:
        self.client = client
        self.cluster = isinstance(client, RedisCluster)
        self.options = options
        self.keys = options.keys
        self.where = where
        self.owns = owns
        self.namespace = namespace
        self.scripts: Scripts | None = None
        self.journal = Journal(self.keys, self._run, self._hgetall)
        # Each session's listing key ('' for none), which a standalone write declares.
        self._users: OrderedDict[str, str] = OrderedDict()
        self._inline = "0" if self.cluster else "1"

    async def open(self) -> None:
        """Connect and load the scripts; a failure raises the core error naming its cause
        (and closes the client the store built)."""
        try:
            self.scripts = await open_scripts(self.client, self.where)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the client if the store built it."""
        self.scripts = None
        if self.owns:
            await self.client.aclose()

    async def _run(
        self, name: str, keys: Sequence[str], args: Sequence[Any], session_id: str | None
    ) -> Any:
        if self.scripts is None:
            raise StoreUnavailableError("the Redis store is not open", may_have_landed=False)
        try:
            return text(await self.scripts.run(name, keys, args))
        except DRIVER_ERRORS as exc:
            write = name != "read"
            raise driver_error(exc, session_id, write=write, where=self.where) from exc

    async def _hgetall(self, key: str) -> dict[str, str]:
        try:
            found = await self.client.hgetall(key)
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.where) from exc
        return {text(k): text(v) for k, v in found.items()}

    def _remember(self, session_id: str, user_id: str | None) -> None:
        users = self._users
        users[session_id] = "" if user_id is None else self.keys.user(user_id)
        users.move_to_end(session_id)
        if len(users) > _USERS_KEPT:
            users.popitem(last=False)

    def _keys(self, session_id: str) -> list[str]:
        """The session's keys; on standalone Redis, its listing key too, once known."""
        keys = self.keys.session(session_id)
        ukey = self._users.get(session_id, "")
        if ukey and not self.cluster:
            keys.append(ukey)
        return keys

    def _common(self, op: str, session_id: str, version: str) -> list[Any]:
        return [op, session_id, version, self.options.idle_ttl_ms, self._inline]

    async def _read(self, session_id: str, want: Want) -> Snapshot | None:
        keys = self.keys.session(session_id)
        reply = await self._run("read", keys, [want_json(want)], session_id)
        if reply is None:
            self._users.pop(session_id, None)
            return None
        snap = snapshot_of(session_id, reply, want)
        self._remember(session_id, snap.user_id)
        return snap

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session read with ``want`` (lua/read.lua), or ``None`` if it is gone."""
        return await self._read(session_id, want)

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """Apply ``changes`` if the session is at ``version`` (lua/apply.lua)."""
        shared = self.journal.shared(changes.scoped)
        tokens = await self.journal.announce(session_id, shared) if shared else {}
        rows = stored_rows(changes)
        for _ in range(_SEALED_RETRIES):
            args = self._common("apply", session_id, str(version))
            args += [changes_json(changes, journal_entry(shared), tokens), want_json(want), *rows]
            reply = await self._run("apply", self._keys(session_id), args, session_id)
            if reply is None:
                self._users.pop(session_id, None)
                return Refused(None)
            if reply[0] == "moved":
                moved = snapshot_of(session_id, reply[1], want)
                self._remember(session_id, moved.user_id)
                return Refused(moved)
            if reply[0] == "ukey":
                self._users[session_id] = reply[1]
            elif reply[0] == "sealed":
                tokens = await self.journal.announce(session_id, shared)
            else:
                head = snapshot_of(session_id, reply[1], _HEAD)
                self._remember(session_id, head.user_id)
                await self._relist(session_id, head.user_id, head.last_activity_at)
                if shared:
                    await self.journal.settle(session_id, tokens)
                return head
        raise StoreUnavailableError(
            f"session {session_id!r}: readers kept sealing the write's maps; not written",
            session_id=session_id,
            may_have_landed=False,
        )

    async def _relist(self, session_id: str, user_id: str | None, at: datetime) -> None:
        """On a cluster, move the session's listing entry after its write landed (never
        backwards); a failure is logged, not raised: the write itself succeeded."""
        if self.cluster and user_id is not None:
            await self._index(self.keys.user(user_id), session_id, micros(at))

    async def _index(self, ukey: str, session_id: str, at: int) -> None:
        try:
            args = self._common("index", session_id, str(at))
            await self._run("apply", [ukey], args, session_id)
        except StoreUnavailableError as exc:
            log.warning("listing index of %r failed after the write landed: %s", session_id, exc)

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Insert the session (lua/apply.lua, op ``create``); a clone reads its source first."""
        first, ui = 0, 0
        rows: list[str] = []
        checkpoints: list[list[Any]] = []
        if new.clone_of is not None:
            source_id, version, end = new.clone_of
            reply = await self._run(
                "read", self.keys.session(source_id), [want_json(_WHOLE)], source_id
            )
            if reply is None:
                return Refused(None)
            source = snapshot_of(source_id, reply, _WHOLE)
            if source.version != version:
                return Refused(head_of(source))
            first, stored = source.first_index, reply[9]
            rows = stored[: end - first]
            ui = source.ui_count - sum(row[0] == "m" for row in stored[end - first :])
            checkpoints = [
                [cp.checkpoint_id, cp.message_count, dump(cp)]
                for cp in source.checkpoints
                if isinstance(cp, Checkpoint) and cp.message_count <= end
            ]
        self._remember(new.session_id, new.user_id)
        head: dict[str, Any] = {"at": micros(new.created_at), "first": first, "ui": ui}
        head["md"] = _json(new.metadata)
        head["ck"] = checkpoints
        if new.user_id is not None:
            head["user"], head["ukey"] = new.user_id, self.keys.user(new.user_id)
        args = self._common("create", new.session_id, str(new.version))
        args += [_json(head), "{}", *rows]
        done = await self._run("apply", self._keys(new.session_id), args, new.session_id)
        if done == "exists":
            return "exists"
        await self._relist(new.session_id, new.user_id, new.created_at)
        return "created"

    async def delete(self, session_id: str) -> bool:
        """Remove the session's keys and listing entry, applying its journal first."""
        args = self._common("delete", session_id, "")
        for _ in range(_SEALED_RETRIES):
            done = await self._run("apply", self._keys(session_id), args, session_id)
            if done == "journal":
                await self.journal.settle(session_id, {})
            elif isinstance(done, list) and done[0] == "ukey":
                self._users[session_id] = done[1]
            else:
                self._users.pop(session_id, None)
                if isinstance(done, list) and self.cluster and done[1]:
                    await self._index_drop(done[1], [session_id], None)
                return isinstance(done, list)
        raise StoreUnavailableError(
            f"session {session_id!r}: its journal kept filling; not deleted",
            session_id=session_id,
            may_have_landed=False,
        )

    async def _index_drop(self, ukey: str, ids: list[str], scores: list[float] | None) -> None:
        try:
            if scores is None:
                await self.client.zrem(ukey, *ids)
            else:
                pairs = [v for i, s in zip(ids, scores, strict=True) for v in (i, repr(s))]
                await self._run("apply", [ukey], ["unlist", "", "", 0, "0", *pairs], None)
        except DRIVER_ERRORS as exc:
            log.warning("listing index %s: dropping %s failed: %s", ukey, ids, exc)
        except StoreUnavailableError as exc:
            log.warning("listing index %s: dropping %s failed: %s", ukey, ids, exc)

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """A page of the user's index (by -activity, then id), each session's summary read
        from its own keys; entries whose session is gone are skipped and removed."""
        ukey = self.keys.user(user_id)
        low = float("-inf") if after is None else float(-micros(after[0]))
        page: list[SessionSummary] = []
        behind: list[tuple[str, int]] = []
        gone: list[tuple[str, float]] = []  # dropped after the walk: it would shift offsets
        offset = 0
        while len(page) < limit:
            asked = limit - len(page)
            try:
                entries: list[Any] = await self.client.zrangebyscore(
                    ukey, low, "+inf", start=offset, num=asked, withscores=True
                )
            except DRIVER_ERRORS as exc:
                raise driver_error(exc, None, write=False, where=self.where) from exc
            offset += len(entries)
            listed: list[tuple[str, float]] = [(text(m), s) for m, s in entries]
            if after is not None:
                listed = [(m, s) for m, s in listed if s != low or m > after[1]]
            found, moved, stale = await self._summaries(user_id, listed)
            page += found
            behind += moved
            gone += stale
            if len(entries) < asked:
                break
        # An entry behind its session's activity (a cluster's lost second step) moves to
        # its place once shown; the last of a full page is the next page's first, unshown.
        shown = {s.id for s in page[: limit - 1 if len(page) >= limit else limit]}
        for session_id, la in behind:
            if session_id in shown:
                await self._index(ukey, session_id, la)
        if gone:
            await self._index_drop(ukey, [i for i, _ in gone], [s for _, s in gone])
        return page[:limit]

    async def _summaries(
        self, user_id: str, listed: list[tuple[str, float]]
    ) -> tuple[list[SessionSummary], list[tuple[str, int]], list[tuple[str, float]]]:
        """The summaries of the listed sessions that are the user's, and those whose index
        entry is behind their activity; entries of sessions gone or not the user's go."""
        if not listed:
            return [], [], []
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for session_id, _ in listed:
                    pipe.hmget(self.keys.meta(session_id), "user", "created", "la", "count")
                    pipe.hlen(self.keys.session(session_id, ("appr",))[0])
                found = await pipe.execute()
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.where) from exc
        page, behind, gone = [], [], []
        for i, (session_id, score) in enumerate(listed):
            fields: list[Any] = text(found[2 * i])
            user, created, la, count = fields
            if user != user_id:
                gone.append((session_id, score))
                continue
            if -int(la) != score:
                behind.append((session_id, int(la)))
            page.append(
                SessionSummary(
                    id=session_id,
                    created_at=from_micros(created),
                    last_activity_at=from_micros(la),
                    message_count=int(count),
                    pending_approvals=int(found[2 * i + 1]),
                )
            )
        return page, behind, gone

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map, after settling its registered writers."""
        return await self.journal.read(scope, owner)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
