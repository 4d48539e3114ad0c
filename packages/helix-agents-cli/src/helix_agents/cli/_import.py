"""``import``: re-create exported sessions through the protocol, idempotently.

Nothing is written until the whole file passed three checks: it parses (one
block per session), every session imports into an empty in-memory store (so
every rule of the store holds for it), and no session of the target holds
other data. Then each session is created (or found with the same user and
metadata); rows the target lacks are appended after checking that the rows it
has are the file's; checkpoints, approvals, context items and late answers the
target does not list are recorded (each is insert-once by its id); the run is
started and finished as in the file. A second import of the same file writes
nothing; an error while writing names the sessions already written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helix_agents.core import (
    Checkpoint,
    MessageCommit,
    SessionStateStore,
    StartRun,
    StateStoreError,
    open_store,
)
from helix_agents.core.messages import dump_message

from ._errors import CliError, ExitCode, exit_code_of
from ._progress import progress_bar
from ._records import SessionBundle, read_bundles
from ._render import out_console, print_json

__all__ = ["import_file"]

_CHUNK = 200


@dataclass
class Tally:
    """What an import wrote."""

    sessions: int = 0
    created: int = 0
    rows: int = 0
    checkpoints: int = 0
    approvals: int = 0
    context_items: int = 0
    late_answers: int = 0
    runs: int = 0


def _conflict(sid: str, why: str) -> CliError:
    return CliError(
        f"session {sid!r} already exists in the target and {why}; nothing more was written "
        f"to it (delete it there, or import into another store)",
        ExitCode.CONFLICT,
    )


async def _check_target(store: SessionStateStore, s: SessionBundle) -> int:
    """The rows the target already holds of ``s``; a conflict if it holds other data."""
    sid = s.session_id
    info = await store.get_session(sid)
    if info is None:
        return 0
    if info.user_id != s.user_id or info.metadata != s.metadata:
        raise _conflict(sid, "has another user or metadata")
    have = await store.get_message_count(sid)
    if have > len(s.rows):
        raise _conflict(sid, f"holds {have} rows, the file {len(s.rows)}")
    if have:
        kept = [dump_message(m) for m in await store.get_messages(sid)]
        if kept != [dump_message(m) for m in s.rows[have - len(kept) : have]]:
            raise _conflict(sid, "its rows differ from the file's")
    return have


async def _rows(store: SessionStateStore, s: SessionBundle, tally: Tally) -> None:
    sid = s.session_id
    have = await _check_target(store, s)
    info = await store.get_session(sid)
    current = None if info is None else info.current_run
    start = None
    if s.run is not None and (current is None or current.run_id != s.run.run_id):
        start = StartRun(run_id=s.run.run_id)
        tally.runs += 1
    todo = s.rows[have:]
    offsets = range(0, len(todo), _CHUNK) if todo else ([0] if start else [])
    for offset in offsets:
        chunk = tuple(todo[offset : offset + _CHUNK])
        await store.append_messages(
            sid,
            MessageCommit(
                messages=chunk,
                start_run=start if offset == 0 else None,
                expect_message_count=have + offset,
            ),
        )
        tally.rows += len(chunk)


async def _records(store: SessionStateStore, s: SessionBundle, tally: Tally) -> None:
    sid = s.session_id
    saved = {cp.checkpoint_id for cp in await store.list_checkpoints(sid)}
    for cp in s.checkpoints:
        if cp.checkpoint_id not in saved:
            # Without the rows retention dropped, counts are relative to the first kept row.
            count = max(0, cp.message_count - s.first_index)
            moved = Checkpoint(**{**cp.model_dump(), "message_count": count})
            tally.checkpoints += (await store.save_checkpoint(sid, moved)).recorded
    listed = {a.approval_id for a in await store.list_pending_approvals(sid)}
    new = [a for a in s.approvals if a.approval_id not in listed]
    if new:
        await store.add_pending_approvals(sid, new)
        tally.approvals += len(new)
    queued = {i.key for i in await store.list_undelivered_context_items(sid)}
    for item in s.context_items:
        if item.key not in queued:
            tally.context_items += (await store.record_context_item(sid, item)).recorded
    waiting = {a.call_id for a in await store.list_undelivered_late_answers(sid)}
    for answer in s.late_answers:
        if answer.call_id not in waiting:
            tally.late_answers += (await store.record_late_answer(sid, answer)).recorded


async def _session(store: SessionStateStore, s: SessionBundle, tally: Tally) -> None:
    sid = s.session_id
    if await store.get_session(sid) is None:
        await store.create_session(sid, user_id=s.user_id, metadata=s.metadata)
        tally.created += 1
    await _rows(store, s, tally)
    await _records(store, s, tally)
    if s.run is not None and s.run.status != "live":
        after = await store.get_session(sid)
        run = None if after is None else after.current_run
        if run is not None and run.run_id == s.run.run_id and run.status == "live":
            await store.finish_run(sid, run.run_id, s.run.status)
    tally.sessions += 1


def _lines(path: Path) -> list[str]:
    """The file's lines, split at line feeds only: JSON Lines may hold a raw U+2028."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {str(path)!r}: {exc}", ExitCode.USAGE) from None
    return [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]


async def _rehearse(bundles: list[SessionBundle], name: str) -> None:
    """Import into an empty memory store: a session the store's rules refuse stops the
    import before the target is touched."""
    async with open_store("memory://") as scratch:
        for bundle in bundles:
            try:
                await _session(scratch, bundle, Tally())
            except StateStoreError as exc:
                raise CliError(
                    f"{name}: session {bundle.session_id!r} cannot be imported: {exc.message} "
                    f"[{exc.code}]; nothing was written",
                    ExitCode.USAGE,
                ) from None


async def import_file(url: str, path: Path, *, as_json: bool) -> None:
    """Import every session of the export file at ``path`` into the store at ``url``."""
    lines = await asyncio.to_thread(_lines, path)
    bundles = read_bundles(lines, str(path))
    await _rehearse(bundles, str(path))
    tally = Tally()
    written: list[str] = []
    async with open_store(url) as store:
        for bundle in bundles:
            await _check_target(store, bundle)
        with progress_bar() as bar:
            task = bar.add_task("import", total=len(bundles))
            try:
                for bundle in bundles:
                    await _session(store, bundle, tally)
                    written.append(bundle.session_id)
                    bar.advance(task)
            except (StateStoreError, CliError) as exc:
                raise _stopped(exc, written, len(bundles)) from exc
    summary: dict[str, Any] = tally.__dict__
    if as_json:
        print_json(summary)
        return
    console = out_console()
    console.print(
        f"imported {tally.sessions} sessions ({tally.created} new): "
        f"{tally.rows} rows, {tally.checkpoints} checkpoints, {tally.approvals} approvals, "
        f"{tally.context_items} context items, {tally.late_answers} late answers",
        soft_wrap=True,
    )


def _stopped(exc: StateStoreError | CliError, written: list[str], total: int) -> CliError:
    """The error that stopped an import half-way, with the sessions it had written."""
    text = exc.message if isinstance(exc, CliError) else f"{exc.message} [{exc.code}]"
    done = ", ".join(repr(sid) for sid in written) or "none"
    return CliError(
        f"{text}; sessions fully written before it ({len(written)} of {total}): {done}; "
        "importing the file again resumes",
        exit_code_of(exc),
    )
