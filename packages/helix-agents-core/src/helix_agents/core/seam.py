"""The engine seam: the few primitives a backend implements under :class:`StoreBase`.

Core owns every public method and every rule (docs/architecture.md, "One
engine"). A backend is an :class:`Engine`: it reads a session as a
:class:`Snapshot` (the head, plus what a :class:`Want` names) and applies a
:class:`Changes` plan atomically, only if the session is still at the version
the plan was built on; otherwise it refuses with the current snapshot and core
plans again. The meaning of every field is in docs/backends/writing.md.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from .checkpoint_pages import CheckpointRange
from .context.models import OutputRef
from .errors import ConcurrencyConflictError, StoreMisconfiguredError
from .messages import ContextMessage, JsonObject, Message, dump_message_json
from .models import (
    Checkpoint,
    CommitResult,
    LateAnswer,
    ListedSession,
    PendingApproval,
    RunInfo,
    SessionSummary,
    StoredContextItem,
)

__all__ = [
    "Changes",
    "Engine",
    "NewSession",
    "Queue",
    "Refused",
    "RowSpan",
    "Snapshot",
    "StoredRow",
    "Want",
    "first_version",
    "head_of",
    "rows_json",
]
if TYPE_CHECKING:
    from .dumps import SessionDump

StoredRow = Message | str | Mapping[str, Any]
"""A row as an engine returns it: a message, its JSON text (``dump_message_json``) or its
JSON object (``dump_message``); core parses it."""

Queue = Literal["context", "late"]
"""A session's two queues: context items (by key) and late answers (by call id)."""


@dataclass(frozen=True, slots=True)
class RowSpan:
    """Rows ``[lo, hi)`` by absolute index (``hi=None``: to the end), clipped to the rows
    the session keeps; of those, the first ``limit`` (the last, if ``last``)."""

    lo: int
    hi: int | None = None
    limit: int | None = None
    last: bool = False

    def clip(self, first_index: int, message_count: int) -> tuple[int, int]:
        """The ``[lo, hi)`` this span selects in rows ``first_index..message_count-1``."""
        lo = max(self.lo, first_index)
        hi = message_count if self.hi is None else min(self.hi, message_count)
        if self.limit is not None and hi - lo > self.limit:
            lo, hi = (hi - self.limit, hi) if self.last else (lo, lo + self.limit)
        return lo, max(lo, hi)


@dataclass(frozen=True, slots=True)
class Want:
    """What a read returns besides the session's head. Keyed lookups answer for the
    keys named only; the rest are whole reads, off unless asked for."""

    commit_id: str | None = None
    run_id: str | None = None
    queue_keys: Mapping[Queue, Sequence[str]] = field(default_factory=dict)
    approval_ids: Sequence[str] = ()
    checkpoint_ids: Sequence[str] = ()
    output_key: str | None = None
    output_id: str | None = None
    output_text: bool = False
    rows: RowSpan | None = None
    queued: Queue | None = None
    pending: bool = False
    checkpoints: CheckpointRange | Literal["all"] | None = None
    window: bool = False
    archive: bool = False
    session_scoped: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A session at one ``version``: its head, and the answers to a :class:`Want`."""

    session_id: str
    version: int
    user_id: str | None
    created_at: datetime
    last_activity_at: datetime
    metadata: JsonObject
    message_count: int
    first_index: int
    ui_count: int
    current_run: RunInfo | None
    window_start: int
    compactions: int
    preserved: bool
    # Keyed lookups
    replay: CommitResult | None = None
    run_id_used: bool = False
    queue_state: Mapping[Queue, Mapping[str, int | None]] = field(default_factory=dict)
    approval_state: Mapping[str, Literal["pending", "resolved"]] = field(default_factory=dict)
    named_checkpoints: Mapping[str, Checkpoint] = field(default_factory=dict)
    keyed_output: OutputRef | None = None
    output: tuple[OutputRef, str] | None = None
    # Whole reads
    rows_from: int = 0
    rows: Sequence[StoredRow] = ()
    queued: Sequence[StoredContextItem | LateAnswer] = ()
    pending: Sequence[PendingApproval] = ()
    checkpoints: Sequence[Checkpoint] = ()
    summary: ContextMessage | None = None
    archive: Sequence[tuple[int, StoredRow]] = ()
    session_scoped: JsonObject = field(default_factory=dict)


def head_of(snap: Snapshot) -> Snapshot:
    """``snap`` without its answers: what a read with ``Want()`` returns."""
    return Snapshot(
        session_id=snap.session_id,
        version=snap.version,
        user_id=snap.user_id,
        created_at=snap.created_at,
        last_activity_at=snap.last_activity_at,
        metadata=snap.metadata,
        message_count=snap.message_count,
        first_index=snap.first_index,
        ui_count=snap.ui_count,
        current_run=snap.current_run,
        window_start=snap.window_start,
        compactions=snap.compactions,
        preserved=snap.preserved,
    )


@dataclass(frozen=True, slots=True)
class Changes:
    """One atomic write, applied in field order; core built it from a snapshot."""

    activity: datetime
    clear: bool = False
    cut_to: int | None = None
    run: RunInfo | None = None
    rows: Sequence[Message] = ()
    rows_json: Sequence[str] | None = None
    deliveries: Sequence[tuple[Queue, str, int]] = ()
    enqueue: StoredContextItem | LateAnswer | None = None
    scoped: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    commit: tuple[str, CommitResult] | None = None
    drop_below: int | None = None
    archive: bool = False
    # Appended to the archive as they are, after retention's (CS-19; an import's archive).
    archived: Sequence[tuple[int, Message]] = ()
    approvals: Sequence[PendingApproval] = ()
    resolve: str | None = None
    checkpoint: Checkpoint | None = None
    delete_checkpoints: Sequence[str] = ()
    output: tuple[OutputRef, str] | None = None
    compaction: tuple[int, ContextMessage] | None = None
    preserve: bool = False
    # The session's whole stored metadata, and one retained row (by absolute index)
    # rewritten in place, role unchanged (docs/lifecycle.md).
    metadata: JsonObject | None = None
    redact: tuple[int, Message] | None = None


def rows_json(changes: Changes) -> Sequence[str]:
    """Each new row's JSON text (``dump_message_json``): the texts core made while checking
    the rows, when it did, else dumped now."""
    if changes.rows_json is not None:
        return changes.rows_json
    return [dump_message_json(row) for row in changes.rows]


@dataclass(frozen=True, slots=True)
class Refused:
    """A write that did not apply: the session moved (its current snapshot, read with the
    same :class:`Want`) or is gone (``None``)."""

    snapshot: Snapshot | None


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session to create at ``version``; ``clone_of`` names a source, its version and
    the row count to copy (rows and checkpoints up to it; nothing else).

    ``version`` is random (:func:`first_version`), so a version never names two
    incarnations of one id: a head read before a delete cannot pass the guard of a
    session created again under the same id.
    """

    session_id: str
    user_id: str | None
    created_at: datetime
    metadata: JsonObject
    version: int = field(default_factory=lambda: first_version())
    clone_of: tuple[str, int, int] | None = None


def first_version() -> int:
    """A new session's first version: random below ``2**62``, leaving room to count up."""
    return secrets.randbits(62)


class Engine(ABC):
    """A backend's storage under :class:`~helix_agents.core.backend.StoreBase`.

    ``system`` and ``namespace`` name where it stores (tracing's
    ``db.system.name``, ``db.namespace``); ``needs_open`` says whether calls
    before ``open`` are refused (INP-7).
    """

    system: str = "helix.custom"
    namespace: str | None = None
    needs_open: bool = False

    async def open(self) -> None:
        """Connect (and check the schema); called by ``async with`` on the store."""
        return None

    async def close(self) -> None:
        """Release what ``open`` took; the store refuses every call afterwards."""
        return None

    async def migrate(self) -> None:
        """Bring the schema up to date; an engine without one has nothing to do."""
        return None

    async def pending_migrations(self) -> list[str] | None:
        """The migrations ``migrate`` would apply, oldest first; ``None``: the engine keeps
        no schema. Works on an engine not opened (``helix-store migrate`` asks first)."""
        return None

    @abstractmethod
    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session with what ``want`` asks, read at one version; ``None`` if it is gone."""

    @abstractmethod
    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """Apply ``changes`` atomically if the session is at ``version``, bumping it by one,
        and return its head after the write (a snapshot answering ``Want()``); otherwise
        write nothing and return :class:`Refused`."""

    @abstractmethod
    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Insert the session unless its id exists; a clone whose source moved is refused."""

    @abstractmethod
    async def delete(self, session_id: str) -> bool:
        """Remove the session and everything it holds; whether it existed."""

    async def delete_at(self, session_id: str, version: int) -> bool:
        """Delete the session only if it is still at ``version``; whether it did. The sweep
        and a create over an expired id use it, so a session written meanwhile survives
        (TTL-4, TTL-5). The default reads, then deletes: a write landing between the two
        is lost with the session; an engine with a lock or a transaction overrides it."""
        snap = await self.snapshot(session_id, Want())
        if snap is None or snap.version != version:
            return False
        return await self.delete(session_id)

    @abstractmethod
    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """Up to ``limit`` of the user's sessions after ``after``: newest activity first,
        ties by id."""

    @abstractmethod
    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """Up to ``limit`` sessions whose id sorts after ``after_id`` (``None``: from the
        first), by id ascending in code point order (UTF-8 bytes); fewer only at the end.
        Sessions gone (deleted, expired) are never listed."""

    @abstractmethod
    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map of scoped state, ``{}`` if never written."""

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """Delete ``session_ids`` (as ``delete`` does) and the user's map of scoped state,
        overwriting the storage they free where the engine can (docs/lifecycle.md,
        "Erasure"). The default refuses: the engine cannot erase."""
        raise StoreMisconfiguredError(
            f"user {user_id!r}: the {self.system} store cannot erase a user's data "
            "(its engine has no erase_user primitive, docs/lifecycle.md)"
        )

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """Create ``new`` and apply ``plans`` in order (the first at ``new.version``) as one
        atomic write: a reader finds no session or all of it, and a failure leaves none
        (docs/export.md, EXP-11). ``"exists"``: the id is taken, nothing was written.

        The default is not atomic: ``create``, then one ``apply`` per plan (an import
        stopped between them resumes, EXP-9); an engine that can write a session in one
        transaction overrides it.
        """
        done = await self.create(new)
        if done != "created":
            return "exists"
        version = new.version
        for changes in plans:
            if isinstance(await self.apply(new.session_id, version, changes, Want()), Refused):
                raise ConcurrencyConflictError(
                    f"session {new.session_id!r} was written by someone else during its "
                    "import; import again once it is idle",
                    session_id=new.session_id,
                )
            version += 1
        return "created"

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session, read at one version (docs/export.md, EXP-2);
        ``None`` if it is gone. The default refuses: the engine cannot export."""
        raise StoreMisconfiguredError(
            f"session {session_id!r}: the {self.system} store cannot export sessions "
            "(its engine has no dump primitive, docs/export.md)",
            session_id=session_id,
        )

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """Every app and user map of scoped state that holds a key, as ``(scope, owner,
        map)`` (docs/export.md, EXP-3). The default refuses: the engine cannot export."""
        raise StoreMisconfiguredError(
            f"the {self.system} store cannot export scoped state "
            "(its engine has no scoped_maps primitive, docs/export.md)"
        )
