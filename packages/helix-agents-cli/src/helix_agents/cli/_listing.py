"""``sessions`` and ``show``: a user's sessions and a session's log, a page at a time."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from helix_agents.core import (
    ContextMessage,
    Message,
    MessagePage,
    SessionNotFoundError,
    ValidationError,
)
from helix_agents.core.backend import decode_message_cursor
from helix_agents.core.messages import dump_message
from helix_agents.core.models import PageOrder

from ._open import open_reading
from ._render import out_console, print_json, short, when

__all__ = ["list_sessions", "show_session"]


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


def _content(row: Message) -> str:
    if isinstance(row, ContextMessage):
        return row.content
    data = dump_message(row)
    content = data.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if "tool_calls" in data:
        text += " tool_calls=" + json.dumps(data["tool_calls"], ensure_ascii=False)
    return text


def _indexes(
    session_id: str, order: PageOrder, cursor: str | None, page: MessagePage, count: int
) -> list[int] | None:
    """The log index of each row of the page, read from the page's cursors.

    Every store of the family makes its cursors with core's ``encode_message_cursor``;
    a store whose cursors are not those gets no index column.
    """
    n = len(page.messages)
    try:
        after = (
            None
            if page.next_cursor is None
            else decode_message_cursor(session_id, order, page.next_cursor)
        )
        start = None if cursor is None else decode_message_cursor(session_id, order, cursor)
    except ValidationError:
        return None
    if order == "asc":
        first = (count if after is None else after) - n
        return list(range(first, first + n))
    if after is not None:
        return list(range(after + n - 1, after - 1, -1))
    high = count if start is None else start
    return list(range(high - 1, high - n - 1, -1))


def _marker(row: Message) -> str:
    return f"context:{row.kind}" if isinstance(row, ContextMessage) else ""


async def show_session(
    url: str,
    session_id: str,
    *,
    first: int,
    cursor: str | None,
    order: PageOrder,
    as_json: bool,
    width: int,
) -> None:
    """Print a session's facts and one page of its log, context rows marked."""
    async with open_reading(url) as store:
        info = await store.get_session(session_id)
        if info is None:
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist", session_id=session_id
            )
        page = await store.page_messages(session_id, limit=first, cursor=cursor, order=order)
    indexes = _indexes(session_id, order, cursor, page, info.message_count)
    if as_json:
        print_json(
            {
                "session": info.model_dump(mode="json"),
                "messages": [
                    {
                        "index": None if indexes is None else indexes[k],
                        "context": isinstance(row, ContextMessage),
                        "row": dump_message(row),
                    }
                    for k, row in enumerate(page.messages)
                ],
                "next_cursor": page.next_cursor,
            }
        )
        return
    console = out_console()
    run = info.current_run
    facts: dict[str, Any] = {
        "session": info.id,
        "user": info.user_id or "-",
        "rows": info.message_count,
        "run": f"{run.run_id} ({run.status})" if run else "-",
        "metadata": json.dumps(info.metadata, ensure_ascii=False) if info.metadata else "-",
    }
    for name, value in facts.items():
        console.print(f"{name + ':':<10}{value}", soft_wrap=True)
    table = Table("#", "role", "context", "content")
    for k, row in enumerate(page.messages):
        index = "" if indexes is None else str(indexes[k])
        table.add_row(index, row.role, _marker(row), short(_content(row), width))
    console.print(table)
    if page.next_cursor is not None:
        console.print(f"next page: --cursor {page.next_cursor}", soft_wrap=True)
