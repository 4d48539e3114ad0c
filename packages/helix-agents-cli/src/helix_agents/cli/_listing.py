"""``sessions``: a user's sessions, or every session of the store, a page at a time."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from helix_agents.core import SessionStateStore
from helix_agents.core.models import SessionSummary

from ._open import open_reading
from ._render import err_console, out_console, print_json, when

__all__ = ["list_sessions"]

# How many pages of 500 sessions a hint for an empty user listing looks through.
_HINT_PAGES = 2


async def list_sessions(
    url: str, user: str | None, *, first: int, cursor: str | None, as_json: bool
) -> None:
    """Print one page of ``user``'s sessions, most recent activity first; with no user,
    one page of every session of the store, in id order, with its owner."""
    hint: list[str] = []
    async with open_reading(url) as store:
        if user is None:
            listed = await store.list_all_sessions(first=first, cursor=cursor)
            sessions: list[SessionSummary] = list(listed.sessions)
            next_cursor = listed.next_cursor
            owners: list[str | None] | None = [s.user_id for s in listed.sessions]
        else:
            page = await store.list_sessions(user, first=first, cursor=cursor)
            sessions, next_cursor, owners = list(page.sessions), page.next_cursor, None
            if not sessions and cursor is None:
                hint = await _owners_naming(store, user)
    if as_json:
        print_json(
            {
                "sessions": [s.model_dump(mode="json") for s in sessions],
                "next_cursor": next_cursor,
            }
        )
        return
    columns = ["session", "created", "last activity", "rows", "approvals"]
    table = Table(*(columns if owners is None else [columns[0], "user", *columns[1:]]))
    for n, s in enumerate(sessions):
        cells = [when(s.created_at), when(s.last_activity_at), str(s.message_count)]
        owner = [] if owners is None else [Text(owners[n] or "-")]
        table.add_row(Text(s.id), *owner, *cells, str(s.pending_approvals))
    console = out_console()
    console.print(table)
    if next_cursor is not None:
        console.print(f"next page: --cursor {next_cursor}", soft_wrap=True)
    if user is not None and not sessions and cursor is None:
        _print_hint(user, hint)


async def _owners_naming(store: SessionStateStore, user: str) -> list[str]:
    """Owners among the store's first sessions that are JSON arrays naming ``user``: the
    adapters' compound owners, such as ADK's ``["app","user"]`` (docs/cli.md)."""
    found: dict[str, None] = {}
    cursor: str | None = None
    for _ in range(_HINT_PAGES):
        page = await store.list_all_sessions(first=500, cursor=cursor)
        for s in page.sessions:
            if s.user_id is None or not s.user_id.startswith("["):
                continue
            try:
                parts = json.loads(s.user_id)
            except ValueError:
                continue
            if isinstance(parts, list) and user in parts:
                found[s.user_id] = None
        cursor = page.next_cursor
        if cursor is None:
            break
    return list(found)


def _print_hint(user: str, owners: list[str]) -> None:
    console = err_console()
    if owners:
        named = ", ".join(f"'{o}'" for o in owners)
        console.print(
            f"no session is owned by {user!r}; owners that name it: {named} (pass one to --user)",
            soft_wrap=True,
            markup=False,
        )
    else:
        console.print(
            f"no session is owned by {user!r}; `helix-store sessions URL` without --user "
            f"lists every session with its owner",
            soft_wrap=True,
            markup=False,
        )
