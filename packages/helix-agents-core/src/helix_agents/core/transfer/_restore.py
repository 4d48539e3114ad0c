"""Writing a :class:`SessionDump` into any store through its engine (EXP-8..EXP-11).

A session is a fixed list of plans (:func:`plans_of`), written by the engine's
``restore`` in one atomic write. Its first version is not random but derived from its
records (:func:`first_version_of`), so the version of a session found in the target
says whether it is this file's, complete (or, on an engine that writes it in steps, how
many plans landed: the import continues there); any other is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import partial
from itertools import islice
from typing import Literal

from ..base._plumbing import row_message
from ..dumps import SessionDump
from ..errors import ConcurrencyConflictError, SessionExistsError, ValidationError
from ..messages import ChatMessage, ContextMessage, Message
from ..models import PendingApproval, RunInfo
from ..protocol import SessionStateStore
from ..seam import Changes, Engine, NewSession, Queue, Refused, StoredRow, Want
from ._records import dumps, session_records

__all__ = ["Outcome", "engine_of", "first_version_of", "plans_of", "restore_session"]

Outcome = Literal["written", "resumed", "present"]
"""What :func:`restore_session` did: wrote the whole session, finished an interrupted
import of it, or found it complete."""

CHUNK = 500
"""Rows per plan."""

_HEAD = Want()


async def engine_of(store: SessionStateStore) -> Engine:
    """The engine under ``store`` (core's ``StoreBase``, or a wrapper that passes its
    ``engine`` through), once it is open; a store without one cannot be exported or
    imported (EXP-2)."""
    engine = getattr(store, "engine", None)
    if not isinstance(engine, Engine):
        raise ValidationError(
            f"{type(store).__name__} is not built on helix_agents.core.backend.StoreBase; "
            "export and import need its engine (docs/export.md)"
        )
    # The engine is used directly: a public read first refuses a store not open (INP-5).
    await store.list_all_sessions(first=1)
    return engine


def first_version_of(dump: SessionDump) -> int:
    """The imported session's first version: from a hash of its block, below ``2**61`` (so
    the plans that follow never reach ``2**62``)."""
    digest = hashlib.sha256()
    for record in session_records(dump):
        digest.update(dumps(record).encode())
    return int.from_bytes(digest.digest()[:8], "big") >> 3


def _chunks(rows: Sequence[Message], size: int = CHUNK) -> Iterator[list[Message]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def _placeholders(count: int, ui: int) -> list[Message]:
    """Rows standing for those retention dropped without archiving: ``ui`` user rows,
    then context rows, so the session's count of user-visible rows is kept."""
    user: Message = ChatMessage(role="user", content="")
    hidden: Message = ContextMessage(kind="notice", content="")
    return [user] * ui + [hidden] * (count - ui)


def _ui(rows: Sequence[StoredRow]) -> int:
    return sum(row_message(row).role != "context" for row in rows)


Plan = Callable[[], Changes]


def plans_of(dump: SessionDump) -> list[Plan]:
    """The plans that write every record of ``dump`` into a new session, in order; each
    builds its :class:`Changes` when called."""
    snap = dump.snapshot
    sid = snap.session_id
    at: datetime = snap.last_activity_at
    plans: list[Plan] = []
    first = snap.first_index
    ui_dropped = snap.ui_count - _ui(snap.rows)
    if not 0 <= ui_dropped <= first:
        raise ValidationError(
            f"session {sid!r}: ui_count {snap.ui_count} does not fit its rows", session_id=sid
        )
    hidden = _placeholders(first, ui_dropped)
    for lo in range(0, first, CHUNK):
        hi = min(lo + CHUNK, first)
        plans.append(partial(Changes, at, rows=hidden[lo:hi], drop_below=hi))
    # The archive is a sequence of its own (CS-19): appended as it is, in its order.
    archive = [(index, row_message(row)) for index, row in snap.archive]
    for lo in range(0, len(archive), CHUNK):
        plans.append(partial(Changes, at, archived=archive[lo : lo + CHUNK]))
    kept = [row_message(row) for row in snap.rows]
    for chunk in _chunks(kept):
        plans.append(partial(Changes, at, rows=chunk))
    current = snap.current_run
    for run_id in sorted(set(dump.run_ids) - {None if current is None else current.run_id}):
        past = RunInfo(run_id=run_id, status="completed", started_at=at, ended_at=at)
        plans.append(partial(Changes, at, run=past))
    if current is not None:
        plans.append(partial(Changes, at, run=current))
    for item, _ in dump.context_items:
        plans.append(partial(Changes, at, enqueue=item))
    for answer, _ in dump.late_answers:
        plans.append(partial(Changes, at, enqueue=answer))
    deliveries: list[tuple[Queue, str, int]]
    deliveries = [("context", i.key, n) for i, n in dump.context_items if n is not None]
    deliveries += [("late", a.call_id, n) for a, n in dump.late_answers if n is not None]
    if deliveries:
        plans.append(partial(Changes, at, deliveries=deliveries))
    if snap.pending:
        plans.append(partial(Changes, at, approvals=list(snap.pending)))
    for approval_id in dump.resolved:
        # Only a resolved id is kept; it is added, then resolved, like any approval.
        stub = PendingApproval(
            approval_id=approval_id, tool_name="", tool_call_id="", input=None, requested_at=at
        )
        plans.append(partial(Changes, at, approvals=[stub], resolve=approval_id))
    for cp in snap.checkpoints:
        plans.append(partial(Changes, at, checkpoint=cp))
    for commit in dump.commits:
        plans.append(partial(Changes, at, commit=commit))
    for output in dump.outputs:
        plans.append(partial(Changes, at, output=output))
    for boundary, summary in dump.compactions:
        row = row_message(summary)
        if not isinstance(row, ContextMessage):
            raise ValidationError(
                f"session {sid!r}: the summary of a compaction is not a context row",
                session_id=sid,
            )
        plans.append(partial(Changes, at, compaction=(boundary, row)))
    scoped = {("session", sid): dict(snap.session_scoped)} if snap.session_scoped else {}
    if scoped or snap.preserved:
        plans.append(partial(Changes, at, scoped=scoped, preserve=snap.preserved))
    if not plans and at != snap.created_at:
        # A session written without a record of its own (an ADK session whose only
        # write was to app or user state) still carries its last activity.
        plans.append(partial(Changes, at))
    return plans


async def restore_session(engine: Engine, dump: SessionDump) -> Outcome:
    """Write ``dump`` as a session of ``engine`` (EXP-8), or continue or skip it (EXP-9);
    then read it back and refuse if anything differs (EXP-10)."""
    snap = dump.snapshot
    sid = snap.session_id
    plans = plans_of(dump)
    first = first_version_of(dump)
    found = await engine.snapshot(sid, _HEAD)
    if found is None:
        new = NewSession(sid, snap.user_id, snap.created_at, dict(snap.metadata), version=first)
        if await engine.restore(new, [plan() for plan in plans]) == "created":
            return await _read_back(engine, dump, "written")
        found = await engine.snapshot(sid, _HEAD)
        if found is None:
            raise _conflict(sid)
    # Found: imported whole already, or partly by an engine whose restore is not atomic.
    done = found.version - first
    if not 0 <= done <= len(plans):
        if await _same(engine, dump):
            return "present"
        raise SessionExistsError(
            f"session {sid!r} exists in the target and holds other records than the "
            "file's; nothing was written to it (delete it there, or import elsewhere)",
            session_id=sid,
        )
    outcome: Outcome = "present" if done == len(plans) else "resumed"
    version = first + done
    for plan in plans[done:]:
        moved = await engine.apply(sid, version, plan(), _HEAD)
        if isinstance(moved, Refused):
            raise _conflict(sid)
        version += 1
    return await _read_back(engine, dump, outcome)


def _conflict(sid: str) -> ConcurrencyConflictError:
    return ConcurrencyConflictError(
        f"session {sid!r} was written by someone else during its import; "
        "import again once it is idle",
        session_id=sid,
    )


async def _read_back(engine: Engine, dump: SessionDump, outcome: Outcome) -> Outcome:
    """``outcome``, once the session in ``engine`` reads back as ``dump`` (EXP-10)."""
    if not await _same(engine, dump):
        sid = dump.snapshot.session_id
        raise ValidationError(
            f"session {sid!r}: the target does not read back what the file holds "
            "(its engine did not store every record, docs/export.md EXP-10)",
            session_id=sid,
        )
    return outcome


async def _same(engine: Engine, dump: SessionDump) -> bool:
    """Whether the session in ``engine`` holds exactly the records of ``dump``."""
    got = await engine.dump(dump.snapshot.session_id)
    if got is None:
        return False
    return list(session_records(got)) == list(session_records(dump))
