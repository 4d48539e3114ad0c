"""``sessions``: a user's sessions, a page at a time."""

from __future__ import annotations

from rich.table import Table

from ._open import open_reading
from ._render import out_console, print_json, when

__all__ = ["list_sessions"]


async def list_sessions(
    url: str, user: str, *, first: int, cursor: str | None, as_json: bool
) -> None:
    """Print one page of ``user``'s sessions, most recent activity first."""
    async with open_reading(url) as store:
        page = await store.list_sessions(user, first=first, cursor=cursor)
    if as_json:
        print_json(
            {
                "sessions": [s.model_dump(mode="json") for s in page.sessions],
                "next_cursor": page.next_cursor,
            }
        )
        return
    table = Table("session", "created", "last activity", "rows", "approvals")
    for s in page.sessions:
        table.add_row(
            s.id,
            when(s.created_at),
            when(s.last_activity_at),
            str(s.message_count),
            str(s.pending_approvals),
        )
    console = out_console()
    console.print(table)
    if page.next_cursor is not None:
        console.print(f"next page: --cursor {page.next_cursor}", soft_wrap=True)
