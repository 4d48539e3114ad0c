"""The read-only pages: sessions, a session, its records, a checkpoint, an output, a
history search (docs/inspector.md, INS-1 … INS-6, INS-14 … INS-18)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from helix_agents.core import (
    SessionInfo,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.backend import encode_message_cursor
from helix_agents.core.context import ContextStore
from helix_agents.core.models import ListedSession

from ._diff import diff
from ._inspector import inspector_of, render
from ._langgraph import decoded_state
from ._records import Records, full_records, pending_records
from ._transcript import output_ids, transcript

__all__ = [
    "checkpoint_page",
    "history_page",
    "output_page",
    "records_page",
    "session_page",
    "sessions_page",
    "window_page",
]

SESSIONS_PAGE = 50
ROWS_PAGE = 100
CHECKPOINTS_SHOWN = 20
OUTPUT_LINES = 200
# get_window reads every row from the window start on, dump_session every row: above this
# many rows the session page links to the window and records pages instead (INS-14, INS-18).
WINDOW_INLINE_ROWS = 10_000


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    return value or None


def _int(request: Request, name: str, default: int | None, low: int = 0) -> int | None:
    text = _param(request, name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValidationError(f"{name} must be a whole number, not {text!r}") from None
    if value < low:
        raise ValidationError(f"{name} must be at least {low}, not {value}")
    return value


def _metadata(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValidationError(f"the metadata filter must be a JSON object, not {text!r}")
    return value


def _context_store(store: SessionStateStore) -> ContextStore:
    if not isinstance(store, ContextStore):
        raise ValidationError("this store does not implement the context store protocol")
    return store


async def _session(store: SessionStateStore, sid: str) -> SessionInfo:
    info = await store.get_session(sid)
    if info is None:
        raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
    return info


def _session_id(request: Request) -> str:
    sid = request.query_params.get("id")
    if not sid:
        raise ValidationError("name a session: ?id=SESSION")
    return sid


async def _records(store: SessionStateStore, sid: str, named: list[str]) -> Records:
    records = await full_records(store, sid, named)
    if records is None:  # deleted since its head was read
        raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
    return records


async def _nothing() -> None:
    return None


async def _queued(store: SessionStateStore, s: ListedSession) -> int:
    items, answers = await asyncio.gather(
        store.list_undelivered_context_items(s.id), store.list_undelivered_late_answers(s.id)
    )
    return len(items) + len(answers)


async def sessions_page(request: Request) -> Response:
    """Every session of the store, filtered and paged on the server (INS-1)."""
    store = inspector_of(request).store
    user = _param(request, "user")
    metadata_text = _param(request, "metadata")
    title = _param(request, "title")
    hours = _int(request, "hours", None, low=1)
    since = None if hours is None else datetime.now(UTC) - timedelta(hours=hours)
    page = await store.list_all_sessions(
        first=SESSIONS_PAGE,
        cursor=_param(request, "cursor"),
        user_id=user,
        active_since=since,
        metadata=_metadata(metadata_text),
        title=title,
    )
    queued = await asyncio.gather(*(_queued(store, s) for s in page.sessions))
    filters = {
        "user": user or "",
        "title": title or "",
        "metadata": metadata_text or "",
        "hours": hours or "",
    }
    return render(
        request,
        "sessions.html",
        sessions=list(zip(page.sessions, queued, strict=True)),
        next_cursor=page.next_cursor,
        filters=filters,
    )


async def session_page(request: Request) -> Response:
    """A session: facts, one page of its transcript, and what it holds besides rows
    (INS-2, INS-3); a page reads ``ROWS_PAGE`` rows, whatever the session's size (INS-14)."""
    inspector = inspector_of(request)
    store = inspector.store
    sid = _session_id(request)
    info = await _session(store, sid)
    count = info.message_count
    start = _int(request, "from", None)
    tail = start is None
    if start is None:
        start = max(0, count - ROWS_PAGE)
    cursor = encode_message_cursor(sid, "asc", start) if start else None
    page = await store.page_messages(sid, limit=ROWS_PAGE, cursor=cursor, order="asc")
    rows = transcript(start, page.messages)
    context = _context_store(store)
    inline = count <= WINDOW_INLINE_ROWS
    named = output_ids(rows)
    window, records, checkpoints, state, redactions = await asyncio.gather(
        context.get_window(sid) if inline else _nothing(),
        _records(store, sid, named) if inline else pending_records(store, sid, named),
        store.page_checkpoints(sid, limit=CHECKPOINTS_SHOWN),
        store.get_scoped_state("session", sid),
        store.list_redactions(sid),
    )
    user_state = await store.get_scoped_state("user", info.user_id) if info.user_id else {}
    app = _param(request, "app")  # an app map's owner is the caller's name: asked for, not found
    app_state = await store.get_scoped_state("app", app) if app else None
    return render(
        request,
        "session.html",
        info=info,
        rows=rows,
        start=start,
        end=start + len(rows),
        tail=tail or start + len(rows) >= count,
        older=max(0, start - ROWS_PAGE) if start else None,
        newer=start + ROWS_PAGE if start + ROWS_PAGE < count else None,
        window=window,
        records=records,
        awaiting={a.tool_call_id: a.approval_id for a in records.approvals},
        checkpoints=checkpoints,
        state=state,
        redactions=redactions,
        user_state=user_state,
        app=app or "",
        app_state=app_state,
        notice=_param(request, "notice"),
    )


async def records_page(request: Request) -> Response:
    """Every approval, context item, late answer and output of a session, read in full
    whatever its length (INS-18)."""
    store = inspector_of(request).store
    sid = _session_id(request)
    info = await _session(store, sid)
    records = await _records(store, sid, [])
    return render(request, "records.html", info=info, records=records)


async def window_page(request: Request) -> Response:
    """The context window of a session: where it starts, its compactions, the latest
    summary (INS-2), for a session too long to read it on its page (INS-14)."""
    store = inspector_of(request).store
    sid = _session_id(request)
    window = await _context_store(store).get_window(sid)
    return render(request, "window.html", sid=sid, window=window, rows_page=ROWS_PAGE)


async def checkpoint_page(request: Request) -> Response:
    """A checkpoint's state as JSON, and its differences from another's (INS-4)."""
    store = inspector_of(request).store
    sid = _session_id(request)
    await _session(store, sid)
    cid = request.query_params.get("cp", "")
    checkpoint = await store.get_checkpoint(sid, cid)
    if checkpoint is None:
        raise ValidationError(f"session {sid!r} has no checkpoint {cid!r}", session_id=sid)
    against = request.query_params.get("against")
    other = None if against is None else await store.get_checkpoint(sid, against)
    if against is not None and other is None:
        raise ValidationError(f"session {sid!r} has no checkpoint {against!r}", session_id=sid)
    others = await store.page_checkpoints(sid, limit=CHECKPOINTS_SHOWN)
    graph = decoded_state(cid, checkpoint.state)
    changes = None
    if other is not None:
        before = decoded_state(other.checkpoint_id, other.state)
        # LangGraph records compare decoded, when both are; any others as stored
        if graph is not None and before is not None:
            changes = diff(before, graph)
        else:
            changes = diff(other.state, checkpoint.state)
    return render(
        request,
        "checkpoint.html",
        sid=sid,
        checkpoint=checkpoint,
        graph=graph,
        other=other,
        changes=changes,
        others=[c for c in others if c.checkpoint_id != cid],
    )


async def output_page(request: Request) -> Response:
    """An offloaded output: its reference, then a line range or a grep (INS-5)."""
    context = _context_store(inspector_of(request).store)
    sid = _session_id(request)
    oid = request.query_params.get("out", "")
    ref = await context.get_output(sid, oid)
    pattern = request.query_params.get("grep")
    if pattern:
        lines = await context.grep_output(sid, oid, pattern)
    else:
        first = _int(request, "start", 1, low=1) or 1
        last = _int(request, "end", None, low=1)
        if last is None:
            last = min(ref.lines, first + OUTPUT_LINES - 1) or None
        lines = await context.read_output(sid, oid, start_line=first, end_line=last)
    return render(request, "output.html", sid=sid, ref=ref, slice=lines, grep=pattern or "")


async def history_page(request: Request) -> Response:
    """The store's history search over the live log and the archive (INS-6)."""
    store = inspector_of(request).store
    sid = _session_id(request)
    await _session(store, sid)
    grep = _param(request, "grep")
    tool = _param(request, "tool")
    found = None
    if grep or tool:
        found = await _context_store(store).search_history(
            sid, grep=grep, tool_name=tool, limit=200
        )
    return render(
        request,
        "history.html",
        sid=sid,
        grep=grep or "",
        tool=tool or "",
        found=found,
        rows_page=ROWS_PAGE,
    )
