"""``EncryptedEngine``: any engine, its sessions' records sealed under per-session data
keys (docs/encryption.md)."""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from ..base._plumbing import HEADS_KEPT, MAX_REPLANS
from ..dumps import SessionDump
from ..errors import ConcurrencyConflictError, StoreUnavailableError
from ..messages import JsonObject
from ..models import ListedSession, SessionSummary
from ..seam import Changes, Engine, NewSession, Refused, Snapshot, Want
from ._aead import aead
from ._keyrecord import key_record, new_key, unwrap, with_key, without_key
from ._keys import KeyProvider
from ._seal import SessionCipher

__all__ = ["EncryptedEngine"]

_HEAD = Want()
# A version observed this far below a write's is of another incarnation of the id.
_SAME_INCARNATION = 2**40


class EncryptedEngine(Engine):
    """``inner`` with every session it creates encrypted under ``keys`` (ENC-1..ENC-6).

    Each new session gets a random AES-256 data key, wrapped under the provider's
    current key and kept in the session's stored metadata (``_helix.k``, never shown
    to callers); sessions stored without one are read and written as they are.
    """

    def __init__(self, inner: Engine, keys: KeyProvider) -> None:
        self.inner = inner
        self.keys = keys
        self.system = inner.system
        self.namespace = inner.namespace
        self.needs_open = inner.needs_open
        self._state = "new"
        # session id -> (a version it was seen at, its key record, its cipher)
        self._ciphers: OrderedDict[str, tuple[int, dict[str, Any], SessionCipher]] = OrderedDict()

    async def open(self) -> None:
        """Open the inner engine."""
        await self.inner.open()
        self.namespace = self.inner.namespace
        self._state = "open"

    async def close(self) -> None:
        """Close the inner engine."""
        self._state = "closed"
        await self.inner.close()

    def check_serving(self) -> None:
        """Refuse work outside the store's calls (a rotation) once the store is closed, or
        before it is opened if its engine needs opening (INP-5, INP-7)."""
        if self._state == "closed":
            raise StoreUnavailableError(f"the {self.system} store is closed")
        if self._state == "new" and self.needs_open:
            raise StoreUnavailableError(f"the {self.system} store is not open: use 'async with'")

    async def migrate(self) -> None:
        """Migrate the inner engine."""
        await self.inner.migrate()

    async def pending_migrations(self) -> list[str] | None:
        """The inner engine's pending migrations."""
        return await self.inner.pending_migrations()

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The inner snapshot, opened."""
        return await self._opened(await self.inner.snapshot(session_id, want))

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """``changes`` sealed under the session's key, applied by the inner engine."""
        # A write of metadata carries the key record as stored now (a rotation elsewhere
        # may have rewrapped it since this engine last saw it), so it reads the head.
        fresh = changes.metadata is not None
        found = await self._cipher_at(session_id, version, want, fresh=fresh)
        if isinstance(found, Refused):
            return found
        if found is not None:
            record, cipher = found
            meta = None if changes.metadata is None else with_key(changes.metadata, record)
            changes = cipher.seal_changes(changes, meta)
        done = await self.inner.apply(session_id, version, changes, want)
        if isinstance(done, Refused):
            return Refused(await self._opened(done.snapshot))
        return await self._open(done)

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """A new session with a new data key; a clone shares its source's."""
        if new.clone_of is None:
            record, cipher = await new_key(self.keys, new.session_id)
        else:
            source, version, _ = new.clone_of
            found = await self._cipher_at(source, version, _HEAD)
            if isinstance(found, Refused):
                return found
            if found is None:
                return await self.inner.create(new)
            record, cipher = found
        done = await self.inner.create(replace(new, metadata=with_key(new.metadata, record)))
        if isinstance(done, Refused):
            return Refused(await self._opened(done.snapshot))
        if done == "created":
            self._keep(
                new.session_id, new.version, record, replace(cipher, session_id=new.session_id)
            )
        return done

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """The session written whole by the inner engine, under a new data key."""
        record, cipher = await new_key(self.keys, new.session_id)
        sealed = [
            cipher.seal_changes(c, None if c.metadata is None else with_key(c.metadata, record))
            for c in plans
        ]
        done = await self.inner.restore(
            replace(new, metadata=with_key(new.metadata, record)), sealed
        )
        if done == "created":
            self._keep(new.session_id, new.version, record, cipher)
        return done

    async def delete(self, session_id: str) -> bool:
        """Delete in the inner engine."""
        self._ciphers.pop(session_id, None)
        return await self.inner.delete(session_id)

    async def delete_at(self, session_id: str, version: int) -> bool:
        """The inner engine's guarded delete (the sweep's, TTL-4)."""
        self._ciphers.pop(session_id, None)
        return await self.inner.delete_at(session_id, version)

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """Erase in the inner engine; the sessions' data keys are forgotten here too."""
        for session_id in session_ids:
            self._ciphers.pop(session_id, None)
        await self.inner.erase_user(user_id, session_ids)

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """The inner engine's listing."""
        return await self.inner.list_sessions(user_id, after, limit)

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """The inner engine's listing, without the key records."""
        return [
            s
            if key_record(s.metadata) is None
            else s.model_copy(update={"metadata": without_key(s.metadata)})
            for s in await self.inner.list_all(after_id, limit)
        ]

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """An app or user map, as stored (they belong to no session's key)."""
        return await self.inner.scoped_state(scope, owner)

    async def dump(self, session_id: str) -> SessionDump | None:
        """The inner dump, opened."""
        dump = await self.inner.dump(session_id)
        if dump is None:
            return None
        if key_record(dump.snapshot.metadata) is None:
            return dump
        snap = await self._open(dump.snapshot)
        return self._ciphers[session_id][2].open_dump(dump, snap)

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """The inner engine's app and user maps."""
        return await self.inner.scoped_maps()

    async def rotate(self, batch_size: int) -> int:
        """Rewrap every session's data key held under another key than the current one,
        reading ``batch_size`` sessions at a time; how many were rewrapped (ENC-5)."""
        after: str | None = None
        done = 0
        while True:
            page = await self.inner.list_all(after, batch_size)
            for listed in page:
                done += await self._rewrap(listed.id)
            if len(page) < batch_size:
                return done
            after = page[-1].id

    async def _rewrap(self, session_id: str) -> int:
        current = self.keys.current_key_id
        for _ in range(MAX_REPLANS):
            head = await self.inner.snapshot(session_id, _HEAD)
            record = None if head is None else key_record(head.metadata)
            if head is None or record is None or record["i"] == current:
                return 0
            data_key = await unwrap(self.keys, session_id, record)
            wrapped = await self.keys.wrap(current, data_key)
            fresh = {**record, "i": current, "w": base64.b64encode(wrapped).decode("ascii")}
            changes = Changes(head.last_activity_at, metadata=with_key(head.metadata, fresh))
            done = await self.inner.apply(session_id, head.version, changes, _HEAD)
            if not isinstance(done, Refused):
                self._ciphers.pop(session_id, None)
                return 1
        raise ConcurrencyConflictError(
            f"session {session_id!r}: other writers moved it {MAX_REPLANS} times in a row "
            "while its key was rewrapped",
            session_id=session_id,
        )

    async def _cipher_at(
        self, session_id: str, version: int, want: Want, *, fresh: bool = False
    ) -> tuple[dict[str, Any], SessionCipher] | Refused | None:
        """The key of the session at ``version`` (``None``: it is stored plain), from the
        last one seen unless ``fresh``; refused when the session is gone or at another
        version."""
        kept = None if fresh else self._ciphers.get(session_id)
        if kept is not None and 0 <= version - kept[0] < _SAME_INCARNATION:
            return kept[1], kept[2]
        head = await self.inner.snapshot(session_id, _HEAD)
        if head is None:
            return Refused(None)
        if head.version != version:
            return Refused(await self.snapshot(session_id, want))
        record = key_record(head.metadata)
        if record is None:
            return None
        return record, await self._cipher(session_id, version, record)

    async def _opened(self, snap: Snapshot | None) -> Snapshot | None:
        return None if snap is None else await self._open(snap)

    async def _open(self, snap: Snapshot) -> Snapshot:
        record = key_record(snap.metadata)
        if record is None:
            return snap
        cipher = await self._cipher(snap.session_id, snap.version, record)
        return cipher.open_snapshot(snap, without_key(snap.metadata))

    async def _cipher(self, session_id: str, version: int, record: dict[str, Any]) -> SessionCipher:
        kept = self._ciphers.get(session_id)
        if kept is not None and kept[1] == record:
            cipher = kept[2]
        else:
            data_key = await unwrap(self.keys, session_id, record)
            cipher = SessionCipher(session_id, aead(data_key), str(record.get("s", session_id)))
        self._keep(session_id, version, record, cipher)
        return cipher

    def _keep(
        self, session_id: str, version: int, record: dict[str, Any], cipher: SessionCipher
    ) -> None:
        ciphers = self._ciphers
        ciphers[session_id] = (version, record, cipher)
        ciphers.move_to_end(session_id)
        if len(ciphers) > HEADS_KEPT:
            ciphers.popitem(last=False)
