"""``sessions`` and ``show``: a user's sessions and a session's log, a page at a time."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from helix_agents.core import (
    ContextMessage,
    Message,
    PageOrder,
    SessionNotFoundError,
    dump_message,
    open_store,
)

from ._render import out_console, print_json, short, when

__all__ = ["list_sessions", "show_session"]


async def list_sessions(
    url: str, user: str, *, first: int, cursor: str | None, as_json: bool
) -> None:
    """Print one page of ``user``'s sessions, most recent activity first."""
    async with open_store(url) as store:
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
    async with open_store(url) as store:
        info = await store.get_session(session_id)
        if info is None:
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist", session_id=session_id
            )
        page = await store.page_messages(session_id, limit=first, cursor=cursor, order=order)
    if as_json:
        print_json(
            {
                "session": info.model_dump(mode="json"),
                "messages": [
                    {"context": isinstance(row, ContextMessage), "row": dump_message(row)}
                    for row in page.messages
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
    table = Table("role", "context", "content")
    for row in page.messages:
        table.add_row(row.role, _marker(row), short(_content(row), width))
    console.print(table)
    if page.next_cursor is not None:
        console.print(f"next page: --cursor {page.next_cursor}", soft_wrap=True)
