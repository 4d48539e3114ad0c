"""Session expiry: per-session TTLs, the sweep and the background sweeper
(docs/lifecycle.md, "Expiry"), once for every engine."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..expiry import (
    DEFAULT_SWEEP_LIMIT,
    MAX_SWEEP_LIMIT,
    SessionExpiry,
    SweepResult,
    check_expires_at,
    check_ttl,
    expiry_record,
)
from ..listing import FILTERED_BATCH
from ..rules import check_limit
from ..seam import Changes, Snapshot, Want
from ..sessiondoc import SessionDoc
from ._plumbing import Plumbing

__all__ = ["SWEEP_ROUNDS", "ExpiryMethods"]

SWEEP_ROUNDS = 10
"""How many sweeps of :data:`DEFAULT_SWEEP_LIMIT` sessions one tick of the background
sweeper makes at most, stopping early when it reaches the last session."""


class ExpiryMethods(Plumbing):
    """Set and read a session's expiry; sweep expired sessions away."""

    async def set_session_expiry(
        self,
        session_id: str,
        *,
        idle_ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> SessionExpiry:
        """Give the session its own idle TTL (seconds or a timedelta; it replaces the
        store's) and/or an absolute expiry; both ``None`` clears them (TTL-2). A write:
        it moves the session's activity, not its metadata version."""
        idle, at = await self._checked(
            session_id,
            lambda: (
                check_ttl("idle_ttl", idle_ttl, session_id=session_id),
                check_expires_at(session_id, expires_at),
            ),
        )

        def plan(snap: Snapshot) -> tuple[Changes, SessionExpiry]:
            doc = SessionDoc(snap.metadata)
            record = expiry_record(idle, at)
            doc.own.pop("x", None)
            if record:
                doc.own["x"] = record
            stored = doc.stored()
            activity = self._activity(snap)
            expiry = self._expiry.expiry(activity, stored)
            return Changes(activity=activity, metadata=stored), expiry

        done = await self._write(session_id, Want(), plan)
        if done.deadline is not None:
            self._start_sweeper()
        return done

    async def get_session_expiry(self, session_id: str) -> SessionExpiry:
        """The session's own expiry settings and its deadline under them and the store's
        ``idle_ttl`` (TTL-2)."""
        snap = await self._snapshot(session_id)
        return self._expiry.expiry(snap.last_activity_at, snap.metadata)

    async def sweep(self, *, limit: int = DEFAULT_SWEEP_LIMIT) -> SweepResult:
        """Delete expired sessions, reading at most ``limit`` sessions by id from where
        this store's last sweep stopped; ``wrapped``: it reached the last one (TTL-4)."""
        self._check_open()
        check_limit(None, "limit", limit, 1, MAX_SWEEP_LIMIT)
        deleted: list[str] = []
        scanned = 0
        after = self._sweep_after
        wrapped = False
        while scanned < limit:
            batch = min(FILTERED_BATCH, limit - scanned)
            got = await self.engine.list_all(after, batch)
            now = self._clock()
            for s in got:
                expired = self._expiry.expired(s.last_activity_at, s.metadata, now)
                if expired and await self._remove_expired(s.id):
                    deleted.append(s.id)
            scanned += len(got)
            if len(got) < batch:
                after, wrapped = None, True
                break
            after = got[-1].id
        self._sweep_after = after
        return SweepResult(deleted=tuple(deleted), scanned=scanned, wrapped=wrapped)

    async def _remove_expired(self, session_id: str) -> bool:
        """Delete the session if it is expired on a fresh read, at that read's version: a
        write landing meanwhile keeps it (TTL-4)."""
        snap = await self.engine.snapshot(session_id, Want())
        if snap is None or not self._expired(snap):
            return False
        self._forget(session_id)
        return await self.engine.delete_at(session_id, snap.version)

    async def _sweep_tick(self) -> None:
        """One background pass: sweeps until the last session, at most
        :data:`SWEEP_ROUNDS` of them (TTL-5)."""
        for _ in range(SWEEP_ROUNDS):
            if (await self.sweep()).wrapped:
                return
