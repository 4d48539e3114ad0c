"""``RedisEngine``: core's engine seam on Redis or a Redis Cluster.

A read is one ``EVALSHA`` of lua/read.lua; a write one of lua/apply.lua, which applies
core's changes only if the session is still at the version they were planned on and
otherwise answers with the current snapshot. On a cluster, a landed write on a session
with a user then moves its entry in the user's listing index (another slot).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import Checkpoint, JsonObject, StoreUnavailableError
from helix_agents.core.backend import (
    DUMP_WANT,
    Changes,
    Engine,
    NewSession,
    Refused,
    RowSpan,
    SessionDump,
    Snapshot,
    Want,
    head_of,
)
from helix_agents.core.models import ListedSession, SessionSummary

from ._codec import (
    changes_json,
    dump,
    head_of_reply,
    micros,
    snapshot_of,
    split_reply,
    stored_rows,
    text,
    want_json,
)
from ._config import StoreOptions
from ._dumps import map_owners, session_dump
from ._errors import DRIVER_ERRORS, driver_error
from ._listing import EveryIndex, Listing
from ._open import open_scripts
from ._scoped import Journal, journal_entry
from ._scripts import Scripts
from ._sentinel import close_sentinels
from ._wait import NotReplicatedError, ReplicaWait
from .errors import ReplicationLagError

__all__ = ["RedisEngine"]

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
        wait: ReplicaWait | None = None,
    ) -> None:
        self.client = client
        self.wait = wait
        self.cluster = isinstance(client, RedisCluster)
        self.options = options
        self.keys = options.keys
        self.where = where
        self.owns = owns
        # Tracing's db.namespace: the database index (a cluster has only 0).
        self.namespace = "0"
        if not isinstance(client, RedisCluster):
            self.namespace = str(client.connection_pool.connection_kwargs.get("db", 0))
        self.scripts: Scripts | None = None
        self.journal = Journal(self.keys, self.run, self._hgetall)
        self.listing = Listing(self)
        self.every = EveryIndex(self)
        # Each session's listing key ('' for none), which a standalone write declares.
        self._users: OrderedDict[str, str] = OrderedDict()
        self._inline = "0" if self.cluster else "1"

    async def open(self) -> None:
        """Connect and load the scripts; a failure raises the core error naming its cause
        (and closes the client the store built)."""
        try:
            self.scripts = await open_scripts(self.client, self.where, self.wait)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the client (and its Sentinel clients) if the store built it."""
        self.scripts = None
        if self.owns:
            await self.client.aclose()
            await close_sentinels(self.client)

    async def run(
        self, name: str, keys: Sequence[str], args: Sequence[Any], session_id: str | None
    ) -> Any:
        """Run script ``name``; its reply decoded, a driver error as core's."""
        if self.scripts is None:
            raise StoreUnavailableError("the Redis store is not open", may_have_landed=False)
        try:
            return text(await self.scripts.run(name, keys, args))
        except DRIVER_ERRORS as exc:
            write = name not in ("read", "dump")
            raise driver_error(exc, session_id, write=write, where=self.where) from exc
        except NotReplicatedError as exc:
            assert self.wait is not None
            prefix = "" if session_id is None else f"session {session_id!r}: "
            raise ReplicationLagError(
                f"{prefix}{self.where}: the write landed on the master, but {exc.acked} of "
                f"{self.wait.replicas} replicas acknowledged it within {self.wait.timeout}s",
                session_id=session_id,
                may_have_landed=True,
            ) from None

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
        """The session's keys; on standalone Redis, the store-wide index and its user's
        listing key too, once known."""
        keys = self.keys.session(session_id)
        if not self.cluster:
            keys.append(self.keys.every)
            ukey = self._users.get(session_id, "")
            if ukey:
                keys.append(ukey)
        return keys

    def common(self, op: str, session_id: str, version: str) -> list[Any]:
        """The ARGV every op of lua/apply.lua starts with."""
        return [op, session_id, version, self.options.idle_ttl_ms, self._inline]

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session read with ``want`` (lua/read.lua), or ``None`` if it is gone."""
        keys = self.keys.session(session_id)
        reply = await self.run("read", keys, [want_json(want)], session_id)
        if reply is None:
            self._users.pop(session_id, None)
            return None
        snap = snapshot_of(session_id, reply, want)
        self._remember(session_id, snap.user_id)
        return snap

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """Apply ``changes`` if the session is at ``version`` (lua/apply.lua)."""
        shared = self.journal.shared(changes.scoped)
        tokens = await self.journal.announce(session_id, shared) if shared else {}
        rows = stored_rows(changes)
        for _ in range(_SEALED_RETRIES):
            args = self.common("apply", session_id, str(version))
            args += [changes_json(changes, journal_entry(shared), tokens), want_json(want), *rows]
            reply = await self.run("apply", self._keys(session_id), args, session_id)
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
                head = head_of_reply(session_id, reply[1])
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
        """On a cluster, move the session's listing entry after its write landed."""
        if self.cluster and user_id is not None:
            await self.listing.move(self.keys.user(user_id), session_id, micros(at))

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Insert the session (lua/apply.lua, op ``create``); a clone reads its source first."""
        first, ui = 0, 0
        rows: list[str] = []
        checkpoints: list[list[Any]] = []
        if new.clone_of is not None:
            source_id, version, end = new.clone_of
            reply = await self.run(
                "read", self.keys.session(source_id), [want_json(_WHOLE)], source_id
            )
            if reply is None:
                return Refused(None)
            source = snapshot_of(source_id, reply, _WHOLE)
            if source.version != version:
                return Refused(head_of(source))
            # The rows as stored, with the mark of each row's kind.
            first, stored = source.first_index, split_reply(reply)[1]
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
        args = self.common("create", new.session_id, str(new.version))
        args += [_json(head), "{}", *rows]
        done = await self.run("apply", self._keys(new.session_id), args, new.session_id)
        if done == "exists":
            self._users.pop(new.session_id, None)
            return "exists"
        await self._relist(new.session_id, new.user_id, new.created_at)
        if self.cluster:
            await self.every.add(new.session_id)
        return "created"

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """The session and every plan in one run of lua/apply.lua (op ``restore``), which
        writes only keys it found absent (docs/export.md, EXP-11). Plans that carry app or
        user maps (written through the journal) take the default path."""
        if new.clone_of is not None or any(self.journal.shared(c.scoped) for c in plans):
            return await super().restore(new, plans)
        sid = new.session_id
        self._remember(sid, new.user_id)
        head: dict[str, Any] = {"at": micros(new.created_at), "first": 0, "ui": 0, "ck": []}
        head["md"] = _json(new.metadata)
        if new.user_id is not None:
            head["user"], head["ukey"] = new.user_id, self.keys.user(new.user_id)
        encoded, rows = [], []
        for changes in plans:
            part = stored_rows(changes)
            entry = json.loads(changes_json(changes, "", {}))
            entry["n"] = len(part)
            encoded.append(entry)
            rows += part
        args = self.common("restore", sid, str(new.version))
        args += [_json(head), _json(encoded), *rows]
        done = await self.run("apply", self._keys(sid), args, sid)
        if done == "exists":
            self._users.pop(sid, None)
            return "exists"
        if done != "created":
            raise StoreUnavailableError(
                f"session {sid!r}: {self.where} holds its key {done[1]!r} without the "
                "session; nothing was written (delete the key, then import again)",
                session_id=sid,
                may_have_landed=False,
            )
        last = plans[-1].activity if plans else new.created_at
        await self._relist(sid, new.user_id, last)
        if self.cluster:
            await self.every.add(sid)
        return "created"

    async def delete(self, session_id: str) -> bool:
        """Remove the session's keys and listing entry, applying its journal first."""
        args = self.common("delete", session_id, "")
        for _ in range(_SEALED_RETRIES):
            done = await self.run("apply", self._keys(session_id), args, session_id)
            if done == "journal":
                await self.journal.settle(session_id, {})
            elif isinstance(done, list) and done[0] == "ukey":
                self._users[session_id] = done[1]
            else:
                self._users.pop(session_id, None)
                if isinstance(done, list) and self.cluster:
                    await self.every.drop(session_id)
                    if done[1]:
                        await self.listing.drop(done[1], [(session_id, None)])
                return isinstance(done, list)
        raise StoreUnavailableError(
            f"session {session_id!r}: its journal kept filling; not deleted",
            session_id=session_id,
            may_have_landed=False,
        )

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """Delete each session (settling its journal), then settle the user's map and drop
        it with the keys beside it, and the user's listing index."""
        for session_id in session_ids:
            await self.delete(session_id)
        await self.journal.read("user", user_id)
        await self.client.delete(*self.keys.scoped("user", user_id))  # one slot
        await self.client.delete(self.keys.user(user_id))

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """A page of the user's listing index (``_listing.Listing``)."""
        return await self.listing.page(user_id, after, limit)

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """A page of the store-wide index (``_listing.EveryIndex``)."""
        return await self.every.page(after_id, limit)

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map, after settling its registered writers."""
        return await self.journal.read(scope, owner)

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session, read by one script (lua/dump.lua, docs/export.md)."""
        keys = self.keys.session(session_id)
        reply = await self.run("dump", keys, [want_json(DUMP_WANT)], session_id)
        return None if not reply else session_dump(session_id, reply)

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """Every app and user map that holds a key, each read as ``scoped_state`` reads it
        (docs/export.md)."""
        try:
            owners = sorted({owner async for owner in map_owners(self.client, self.keys)})
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False, where=self.where) from exc
        maps = []
        for scope, owner in owners:
            values = await self.journal.read(scope, owner)
            if values:
                maps.append((scope, owner, values))
        return maps


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
