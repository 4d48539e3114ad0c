"""``stats``: counts and sizes of the sessions a command can reach through the protocol."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from helix_agents.core import SessionNotFoundError
from helix_agents.core.backend import dump_message_json

from ._open import open_reading
from ._render import out_console, print_json, when
from ._scope import session_ids

__all__ = ["store_stats"]


async def store_stats(
    url: str, sessions: Sequence[str], users: Sequence[str], *, as_json: bool
) -> None:
    """Print sessions, rows, context rows, row bytes and oldest activity of the scope."""
    totals: dict[str, Any] = {
        "sessions": 0,
        "rows": 0,
        "context_rows": 0,
        "retained_rows": 0,
        "row_bytes": 0,
        "checkpoints": 0,
        "pending_approvals": 0,
        "undelivered_context_items": 0,
        "undelivered_late_answers": 0,
    }
    oldest: datetime | None = None
    newest: datetime | None = None
    async with open_reading(url) as store:
        for sid in await session_ids(store, sessions, users, whole_store=True):
            info = await store.get_session(sid)
            if info is None:
                raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
            totals["sessions"] += 1
            totals["rows"] += info.message_count
            cursor: str | None = None
            while True:
                page = await store.page_messages(sid, limit=500, cursor=cursor)
                for row in page.messages:
                    totals["retained_rows"] += 1
                    totals["context_rows"] += row.role == "context"
                    totals["row_bytes"] += len(dump_message_json(row, sid).encode())
                cursor = page.next_cursor
                if cursor is None:
                    break
            totals["checkpoints"] += len(await store.list_checkpoints(sid))
            totals["pending_approvals"] += len(await store.list_pending_approvals(sid))
            items = await store.list_undelivered_context_items(sid)
            totals["undelivered_context_items"] += len(items)
            answers = await store.list_undelivered_late_answers(sid)
            totals["undelivered_late_answers"] += len(answers)
            oldest = info.last_activity_at if oldest is None else min(oldest, info.last_activity_at)
            newest = info.last_activity_at if newest is None else max(newest, info.last_activity_at)
    totals["oldest_activity"] = oldest.isoformat() if oldest else None
    totals["newest_activity"] = newest.isoformat() if newest else None
    if as_json:
        print_json(totals)
        return
    console = out_console()
    for name, value in totals.items():
        shown = (
            when(datetime.fromisoformat(value)) if name.endswith("_activity") and value else value
        )
        console.print(f"{name.replace('_', ' ') + ':':<28}{shown if shown is not None else '-'}")
