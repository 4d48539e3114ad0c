"""What every method of :class:`StoreBase` stands on: the open check, reads, and the
plan-and-apply loop of a write (docs/architecture.md, "One engine")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Self, TypeVar

import pydantic

from ..clock import check_clock, utcnow
from ..errors import (
    ConcurrencyConflictError,
    StateStoreError,
    StoreUnavailableError,
    session_not_found,
)
from ..expiry import DEFAULT_SWEEP_INTERVAL, ExpiryPolicy, check_keep_checkpoints, check_ttl
from ..inprocess import SessionRecords, snapshot_of
from ..inputs import check_id, check_input
from ..limits import check_max_messages
from ..messages import ChatMessage, ContextMessage, Message, parse_message, parse_message_json
from ..models import SessionInfo
from ..rules import next_activity
from ..seam import Changes, Engine, NewSession, Refused, Snapshot, StoredRow, Want, head_of
from ..sessiondoc import SessionDoc, check_readable

__all__ = ["HEADS_KEPT", "MAX_REPLANS", "Plumbing", "fresh_head", "info", "row_message"]

MAX_REPLANS = 64
"""How often a write is planned again after other writers moved the session first."""

HEADS_KEPT = 1024
"""How many sessions' last-seen heads a store keeps to plan head-only writes from."""

log = logging.getLogger("helix_agents.core.expiry")

_T = TypeVar("_T")
_R = TypeVar("_R")
_NOTHING = Want()
_metadata: pydantic.TypeAdapter[dict[str, pydantic.JsonValue]] = pydantic.TypeAdapter(
    dict[str, pydantic.JsonValue]
)

Plan = Callable[[Snapshot], tuple[Changes | None, _R]]
"""A write's rules: from a snapshot, the changes to apply (``None``: none) and the answer."""


def row_message(row: StoredRow) -> Message:
    """A row as an engine returns it (a message, its JSON text or its JSON object), parsed."""
    if isinstance(row, str):
        return parse_message_json(row)
    if isinstance(row, (ChatMessage, ContextMessage)):
        return row
    return parse_message(row if isinstance(row, dict) else dict(row))


class Plumbing:
    """The store's engine, options and state; the helpers the public methods share."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = utcnow,
        idle_ttl: float | timedelta | None = None,
        sweep_interval: float | timedelta | None = DEFAULT_SWEEP_INTERVAL,
        keep_checkpoints: int | None = None,
        checkpoint_ttl: float | timedelta | None = None,
    ) -> None:
        if max_messages is not None:
            check_max_messages(max_messages)
        self.engine = engine
        self.max_messages = max_messages
        self._clock = check_clock(clock)
        self._expiry = ExpiryPolicy(
            check_ttl("idle_ttl", idle_ttl),
            check_keep_checkpoints(keep_checkpoints),
            check_ttl("checkpoint_ttl", checkpoint_ttl),
        )
        self._sweep_interval = check_ttl("sweep_interval", sweep_interval)
        self._sweeper: asyncio.Task[None] | None = None
        self._sweep_after: str | None = None
        self._state = "new"
        # The last head seen of recently used sessions: a write that needs nothing else
        # is planned from it and sent at once (one round trip); the engine's version guard
        # refuses it if another writer moved the session meanwhile.
        self._heads: OrderedDict[str, Snapshot] = OrderedDict()

    async def __aenter__(self) -> Self:
        self._check_open(entering=True)
        if self._state == "new":
            await self.engine.open()
            self._state = "open"
        if self._expiry.idle_ttl is not None:
            self._start_sweeper()
        return self

    async def close(self) -> None:
        """Close the store; every later call raises :class:`StoreUnavailableError`."""
        if self._state != "closed":
            self._state = "closed"
            sweeper, self._sweeper = self._sweeper, None
            if sweeper is not None:
                sweeper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeper
            await self.engine.close()

    def _start_sweeper(self) -> None:
        """Start the background sweeper (TTL-5) unless it runs, is off or the store closed."""
        if self._sweeper is None and self._sweep_interval is not None and self._state != "closed":
            self._sweeper = asyncio.get_running_loop().create_task(
                self._sweep_forever(self._sweep_interval.total_seconds())
            )

    async def _sweep_forever(self, interval: float) -> None:
        """Sweep every ``interval`` seconds, a bounded pass each time, until closed."""
        while True:
            await asyncio.sleep(interval)
            try:
                await self._sweep_tick()
            except StoreUnavailableError:
                if self._state == "closed":
                    return
                log.warning("the %s store's sweep failed; trying again later", self.engine.system)
            except Exception:  # the sweeper outlives one failure; the next tick retries
                log.exception("the %s store's sweep failed", self.engine.system)

    async def _sweep_tick(self) -> None:
        """One background pass; :class:`ExpiryMethods` defines it."""

    async def migrate(self) -> None:
        """Bring the backend's schema up to date (a no-op where there is none)."""
        self._check_open(entering=True)
        await self.engine.migrate()

    def _check_open(self, *, entering: bool = False) -> None:
        """Refuse a closed store, and one not opened yet if its engine needs opening (INP-5,
        INP-7), before any argument is looked at."""
        if self._state == "closed":
            raise StoreUnavailableError(f"the {self.engine.system} store is closed")
        if self._state == "new" and self.engine.needs_open and not entering:
            raise StoreUnavailableError(
                f"the {self.engine.system} store is not open: use 'async with'"
            )

    async def _snapshot(self, session_id: str, want: Want = _NOTHING) -> Snapshot:
        """The open check, the id, then the session read with ``want``; missing: refused."""
        self._check_open()
        check_id(session_id, "session_id")
        snap = await self.engine.snapshot(session_id, want)
        if snap is None or self._expired(snap):
            self._heads.pop(session_id, None)
            raise session_not_found(session_id)
        self._keep_head(snap)
        return snap

    async def _reclaim(self, session_id: str) -> bool:
        """Free an id a create found taken, if its session is expired: delete it at the
        version read (TTL-3). Whether the id may be free now."""
        snap = await self.engine.snapshot(session_id, Want())
        if snap is None:
            return True
        if not self._expired(snap):
            return False
        self._forget(session_id)
        await self.engine.delete_at(session_id, snap.version)
        return True

    def _expired(self, snap: Snapshot) -> bool:
        """Whether the session is expired now, by the store's clock (TTL-1, TTL-2)."""
        policy = self._expiry
        if not policy.may_expire(snap.metadata):
            return False  # no clock read: most sessions of most stores never expire
        return policy.expired(snap.last_activity_at, snap.metadata, self._clock())

    def _keep_head(self, snap: Snapshot) -> None:
        check_readable(snap.session_id, snap.metadata)
        heads = self._heads
        heads[snap.session_id] = head_of(snap)
        heads.move_to_end(snap.session_id)
        if len(heads) > HEADS_KEPT:
            heads.popitem(last=False)

    def _forget(self, session_id: str) -> None:
        self._heads.pop(session_id, None)

    async def _require(self, session_id: str) -> None:
        await self._snapshot(session_id)

    async def _checked(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` on an open store after the session id; if it refuses, a missing
        session is reported first (the order of checks, docs/commit.md)."""
        self._check_open()
        return await check_input(session_id, check, self._require)

    async def _write(self, session_id: str, want: Want, plan: Plan[_R]) -> _R:
        """Plan from a snapshot and apply; when the session moved first, plan again from
        the snapshot the refusal carries.

        A write that needs only the head starts from the last head seen, without a read.
        That head may be stale, so it is trusted only when the engine accepts the plan
        at its version: a plan it refuses, or whose answer needs no write, is planned
        again from a fresh read.
        """
        self._check_open()
        check_id(session_id, "session_id")
        snap = self._heads.get(session_id) if want == _NOTHING else None
        if snap is not None and self._expired(snap):
            snap = None  # perhaps stale: decided on a fresh read
        if snap is not None:
            try:
                changes, answer = plan(snap)
            except StateStoreError:
                changes = None
            if changes is not None:
                moved = await self._apply(session_id, snap.version, changes, want)
                if moved is None:
                    return answer
                snap = moved
            else:
                snap = None
        if snap is None:
            snap = await self._snapshot(session_id, want)
        for _ in range(MAX_REPLANS):
            changes, answer = plan(snap)
            if changes is None:
                return answer
            moved = await self._apply(session_id, snap.version, changes, want)
            if moved is None:
                return answer
            snap = moved
        raise ConcurrencyConflictError(
            f"session {session_id!r}: other writers moved it {MAX_REPLANS} times in a row",
            session_id=session_id,
        )

    async def _apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Snapshot | None:
        """Apply and keep the new head: ``None``; refused, the current snapshot to plan
        again from."""
        done = await self.engine.apply(session_id, version, changes, want)
        if isinstance(done, Refused):
            if done.snapshot is None or self._expired(done.snapshot):
                self._forget(session_id)
                raise session_not_found(session_id)
            self._keep_head(done.snapshot)
            return done.snapshot
        self._keep_head(done)
        return None

    def _activity(self, snap: Snapshot) -> datetime:
        """The activity time of a write on ``snap`` (SES-7)."""
        return next_activity(snap.last_activity_at, self._clock())

    def _drop_below(self, first_index: int, message_count: int) -> int | None:
        """Where retention cuts after a write leaves ``message_count`` rows (MSG-5)."""
        limit = self.max_messages
        if limit is None or message_count - first_index <= limit:
            return None
        return message_count - limit


def info(snap: Snapshot) -> SessionInfo:
    """The :class:`SessionInfo` of a snapshot: its stored metadata split into the caller's
    keys, the title and the metadata version (docs/lifecycle.md)."""
    check_readable(snap.session_id, snap.metadata)
    doc = SessionDoc(snap.metadata)
    return SessionInfo(
        id=snap.session_id,
        user_id=snap.user_id,
        created_at=snap.created_at,
        last_activity_at=snap.last_activity_at,
        message_count=snap.message_count,
        current_run=snap.current_run,
        metadata=_metadata.validate_python(doc.user),
        title=doc.title,
        metadata_version=doc.version,
        branch_of=doc.branch_of,
    )


def fresh_head(new: NewSession) -> Snapshot:
    """The head of a session just created from ``new`` (not a clone), as the in-process
    engine reads a new session's records: what "empty" means is decided there once."""
    fresh = SessionRecords(
        new.session_id, new.user_id, new.created_at, new.created_at, new.metadata, new.version
    )
    return snapshot_of(fresh, _NOTHING)
