"""``export``: sessions and every record the protocol can read back, as JSON Lines."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from helix_agents.core import Message, SessionNotFoundError, SessionStateStore
from helix_agents.core.backend import redact_url
from helix_agents.core.messages import dump_message

from ._open import open_reading
from ._progress import progress_bar
from ._records import FORMAT, VERSION, dumps
from ._scope import session_ids

__all__ = ["export_sessions"]


async def _session_records(store: SessionStateStore, sid: str) -> AsyncIterator[dict[str, Any]]:
    info = await store.get_session(sid)
    if info is None:
        raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
    rows: list[Message] = []
    cursor: str | None = None
    while True:
        page = await store.page_messages(sid, limit=500, cursor=cursor)
        rows.extend(page.messages)
        cursor = page.next_cursor
        if cursor is None:
            break
    # Rows retention dropped are gone; the retained ones keep their indexes.
    first = info.message_count - len(rows)
    yield {
        "type": "session",
        "session": sid,
        "user_id": info.user_id,
        "metadata": info.metadata,
        "created_at": info.created_at.isoformat(),
        "last_activity_at": info.last_activity_at.isoformat(),
        "message_count": info.message_count,
        "first_index": first,
        "run": None if info.current_run is None else info.current_run.model_dump(mode="json"),
    }
    for offset, row in enumerate(rows):
        yield {"type": "row", "session": sid, "index": first + offset, "row": dump_message(row)}
    for cp in await store.list_checkpoints(sid):
        yield {"type": "checkpoint", "session": sid, "checkpoint": cp.model_dump(mode="json")}
    for ap in await store.list_pending_approvals(sid):
        yield {"type": "approval", "session": sid, "approval": ap.model_dump(mode="json")}
    for item in await store.list_undelivered_context_items(sid):
        yield {
            "type": "context_item",
            "session": sid,
            "item": item.model_dump(mode="json", by_alias=True, exclude_unset=True),
        }
    for answer in await store.list_undelivered_late_answers(sid):
        yield {"type": "late_answer", "session": sid, "answer": answer.model_dump(mode="json")}


async def export_sessions(url: str, sessions: Sequence[str], users: Sequence[str]) -> None:
    """Write the named sessions and every session of ``users`` to stdout."""
    out = sys.stdout
    async with open_reading(url) as store:
        ids = await session_ids(store, sessions, users, whole_store=True)
        for sid in sessions:
            # A missing session ends the command before the file has a first line.
            if await store.get_session(sid) is None:
                raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
        out.write(
            dumps(
                {
                    "type": FORMAT,
                    "version": VERSION,
                    "source": redact_url(url),
                    "exported_at": datetime.now(UTC).isoformat(),
                }
            )
        )
        records = 0
        with progress_bar() as bar:
            task = bar.add_task("export", total=len(ids))
            for sid in ids:
                async for record in _session_records(store, sid):
                    records += record["type"] != "session"
                    out.write(dumps(record))
                bar.advance(task)
        out.write(dumps({"type": "end", "sessions": len(ids), "records": records}))
    out.flush()
