"""Live updates of a session page: a server-sent event stream fed by polling the store
once a second, on every backend (docs/inspector.md, INS-7). No backend's notification:
sending one from every commit would cost every writer for a page few have open
(docs/decisions.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from helix_agents.core import SessionStateStore, StateStoreError, ValidationError

from ._inspector import inspector_of

__all__ = ["POLL_SECONDS", "events"]

POLL_SECONDS = 1.0


async def _mark(store: SessionStateStore, sid: str) -> tuple[object, ...] | None:
    """What a change of the page shows up in: rows, activity, approvals, queued items."""
    info = await store.get_session(sid)
    if info is None:
        return None
    approvals, items, answers = await asyncio.gather(
        store.list_pending_approvals(sid),
        store.list_undelivered_context_items(sid),
        store.list_undelivered_late_answers(sid),
    )
    return (
        info.message_count,
        info.last_activity_at.isoformat(),
        len(approvals),
        len(items),
        len(answers),
    )


async def _stream(request: Request, store: SessionStateStore, sid: str) -> AsyncIterator[str]:
    seen = await _mark(store, sid)
    yield "retry: 2000\n\n"
    while not await request.is_disconnected():
        await asyncio.sleep(POLL_SECONDS)
        try:
            now = await _mark(store, sid)
        except StateStoreError:
            return  # the store closed or failed: the browser's EventSource reconnects
        if now != seen:
            seen = now
            rows = None if now is None else now[0]
            yield f"event: change\ndata: {json.dumps({'rows': rows})}\n\n"
        else:
            yield ": idle\n\n"  # a comment: shows a dead connection to the server


async def events(request: Request) -> Response:
    """``text/event-stream`` of ``change`` events for the session ``?id=``."""
    sid = request.query_params.get("id")
    if not sid:
        raise ValidationError("name a session: ?id=SESSION")
    store = inspector_of(request).store
    return StreamingResponse(_stream(request, store, sid), media_type="text/event-stream")
