"""Reading an export file into a store: checked whole first, then written (EXP-6..EXP-12)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..clock import utcnow
from ..inprocess import SessionRecords, apply_changes, dump_of
from ..protocol import SessionStateStore
from ..seam import Changes, Engine, NewSession
from ._reader import ExportFileError, ScopedMap, SessionBlock, read_export
from ._records import session_records
from ._restore import engine_of, first_version_of, plans_of, restore_session

__all__ = ["ImportReport", "check_export", "import_lines"]


@dataclass
class ImportReport:
    """What an import did: sessions written whole, finished (an earlier import of them
    was interrupted) or found complete; maps merged; records read."""

    written: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    maps: int = 0
    sessions: int = 0


def _rehearse(block: SessionBlock, name: str) -> None:
    """Apply the block's plans to a session kept in Python and read it back: a block the
    plans cannot carry whole is refused before anything is written (EXP-7)."""
    snap = block.dump.snapshot
    try:
        plans = plans_of(block.dump)
    except ExportFileError:
        raise
    except ValueError as exc:
        raise ExportFileError(name, block.line, None, str(exc)) from None
    scratch = SessionRecords(
        snap.session_id, snap.user_id, snap.created_at, snap.created_at, dict(snap.metadata)
    )
    for plan in plans:
        apply_changes(scratch, plan(), lambda key, values: None)
    if list(session_records(dump_of(scratch))) != list(session_records(block.dump)):
        raise ExportFileError(
            name, block.line, None, f"session {snap.session_id!r} cannot be carried whole"
        )


def check_export(lines: Iterable[str], name: str) -> int:
    """Read the whole file without writing: the number of sessions it holds, or an
    :class:`ExportFileError` at its first fault (EXP-7)."""
    sessions = 0
    for entry in read_export(lines, name):
        if isinstance(entry, SessionBlock):
            first_version_of(entry.dump)
            _rehearse(entry, name)
            sessions += 1
    return sessions


async def _merge_map(engine: Engine, entry: ScopedMap) -> None:
    """Merge an app or user map through a session made for it and deleted after, even
    when the write fails or the import is cancelled (EXP-3).

    The seam has no write of a map alone: a map changes only with a session's write,
    which is what lets Redis keep a map's writers in the session's journal
    (docs/scoped-state.md). The file's sessions cannot carry it either: a map belongs
    to no one session, and a session written by the import must read back as its block.
    """
    now = utcnow()
    new = NewSession(f"helix-import-{uuid.uuid4().hex}", None, now, {})
    try:
        changes = Changes(now, scoped={(entry.scope, entry.owner): entry.values})
        await engine.restore(new, [changes])
    finally:
        await asyncio.shield(engine.delete(new.session_id))


async def import_lines(
    store: SessionStateStore,
    lines: Callable[[], Iterable[str]],
    name: str,
    *,
    on_checked: Callable[[int], object] | None = None,
    on_session: Callable[[str], object] | None = None,
) -> ImportReport:
    """Import the export file whose lines ``lines()`` yields (called twice: the file is
    read once to check it, then again to write it, so one session is in memory at a time).
    ``on_checked(sessions)`` is called once the file passed its check, ``on_session(id)``
    after each session is written."""
    engine = await engine_of(store)
    report = ImportReport()
    report.sessions = check_export(lines(), name)
    if on_checked is not None:
        on_checked(report.sessions)
    for entry in read_export(lines(), name):
        if isinstance(entry, ScopedMap):
            await _merge_map(engine, entry)
            report.maps += 1
            continue
        sid = entry.dump.snapshot.session_id
        outcome = await restore_session(engine, entry.dump)
        getattr(report, outcome).append(sid)
        if on_session is not None:
            on_session(sid)
    return report
