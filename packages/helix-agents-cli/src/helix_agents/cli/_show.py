"""``show``: a session's facts, its records, and a page of its log."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from helix_agents.core import (
    ContextMessage,
    Message,
    MessagePage,
    SessionInfo,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.backend import decode_message_cursor
from helix_agents.core.messages import dump_message
from helix_agents.core.models import PageOrder

from ._open import open_reading
from ._render import out_console, print_json, short
from ._rows import row_calls, row_text

__all__ = ["show_session"]

# The checkpoints a LangGraph thread keeps its checkpoints in (helix_agents.langgraph._layout).
LANGGRAPH_CHECKPOINT = "c\x1f"
_LATEST = 3  # checkpoint ids shown


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


@dataclass
class _Records:
    """What the session holds besides its rows, as the protocol lists it."""

    records: dict[str, Any]
    langgraph_checkpoints: int

    @classmethod
    async def read(cls, store: SessionStateStore, sid: str) -> _Records:
        checkpoints = await store.list_checkpoints(sid)
        latest = sorted(checkpoints, key=lambda c: c.created_at, reverse=True)[:_LATEST]
        records: dict[str, Any] = {
            "checkpoints": {
                "count": len(checkpoints),
                "latest": [c.checkpoint_id for c in latest],
            },
            "pending_approvals": [
                a.model_dump(mode="json") for a in await store.list_pending_approvals(sid)
            ],
            "undelivered_context_items": [
                i.model_dump(mode="json", by_alias=True, exclude_unset=True)
                for i in await store.list_undelivered_context_items(sid)
            ],
            "undelivered_late_answers": [
                a.model_dump(mode="json") for a in await store.list_undelivered_late_answers(sid)
            ],
            "scoped_state": await store.get_scoped_state("session", sid),
            "redactions": [r.model_dump(mode="json") for r in await store.list_redactions(sid)],
            "branches": [b.model_dump(mode="json") for b in await store.list_branches(sid)],
            "usage": (await store.get_usage(sid)).model_dump(mode="json"),
            "expiry": (await store.get_session_expiry(sid)).model_dump(mode="json"),
        }
        graph = sum(c.checkpoint_id.startswith(LANGGRAPH_CHECKPOINT) for c in checkpoints)
        return cls(records, graph)


def _kind(info: SessionInfo, records: _Records) -> str | None:
    if info.message_count == 0 and records.langgraph_checkpoints:
        return f"LangGraph thread with {records.langgraph_checkpoints} checkpoints"
    return None


def _shown_id(checkpoint_id: str) -> str:
    return checkpoint_id.replace("\x1f", "␟")  # U+001F as the symbol that names it


def _record_lines(records: dict[str, Any]) -> dict[str, str]:
    checkpoints = records["checkpoints"]
    latest = ", ".join(_shown_id(i) for i in checkpoints["latest"])
    approvals = records["pending_approvals"]
    items = records["undelivered_context_items"]
    answers = records["undelivered_late_answers"]
    state = records["scoped_state"]
    return {
        "checkpoints": f"{checkpoints['count']}" + (f" (latest: {latest})" if latest else ""),
        "approvals": "; ".join(
            f"{a['approval_id']} {a['tool_name']}({json.dumps(a['input'], ensure_ascii=False)})"
            for a in approvals
        )
        or "-",
        "context items": "; ".join(f"{i['key']} ({i['item']['kind']})" for i in items) or "-",
        "late answers": "; ".join(f"{a['call_id']} {a['tool_name']}" for a in answers) or "-",
        "session state": json.dumps(state, ensure_ascii=False) if state else "-",
        "redactions": "; ".join(
            f"row {r['index']} by {r['actor'] or '-'} at {r['at']}: {r['reason']}"
            for r in records["redactions"]
        )
        or "-",
        "branches": "; ".join(f"{b['session_id']} at row {b['at']}" for b in records["branches"])
        or "-",
        "usage": _usage_line(records["usage"]),
        "expires": records["expiry"]["deadline"] or "-",
    }


def _usage_line(usage: dict[str, Any]) -> str:
    if not usage["requests"]:
        return "-"
    cost = "" if usage["cost"] is None else f", cost {usage['cost']}"
    models = ", ".join(m["model"] for m in usage["models"])
    return (
        f"{usage['requests']} requests ({models}): {usage['input_tokens']} in "
        f"({usage['cached_tokens']} cached), {usage['output_tokens']} out{cost}"
    )


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
    """Print a session's facts, its records and one page of its log, context rows marked."""
    async with open_reading(url) as store:
        info = await store.get_session(session_id)
        if info is None:
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist", session_id=session_id
            )
        page = await store.page_messages(session_id, limit=first, cursor=cursor, order=order)
        records = await _Records.read(store, session_id)
    indexes = _indexes(session_id, order, cursor, page, info.message_count)
    kind = _kind(info, records)
    if as_json:
        print_json(
            {
                "session": info.model_dump(mode="json"),
                "langgraph_checkpoints": records.langgraph_checkpoints,
                **records.records,
                "messages": [
                    {
                        "index": None if indexes is None else indexes[k],
                        "context": isinstance(row, ContextMessage),
                        "calls": row_calls(row),
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
        "rows": kind or info.message_count,
        "run": f"{run.run_id} ({run.status})" if run else "-",
        "title": info.title or "-",
        "branch of": (
            f"{info.branch_of.parent_id} at row {info.branch_of.at}" if info.branch_of else "-"
        ),
        "metadata": json.dumps(info.metadata, ensure_ascii=False) if info.metadata else "-",
        **_record_lines(records.records),
    }
    for name, value in facts.items():
        console.print(f"{name + ':':<15}{value}", soft_wrap=True, markup=False)
    if not page.messages:
        return
    table = Table("#", "role", "context", "content")
    for k, row in enumerate(page.messages):
        index = "" if indexes is None else str(indexes[k])
        table.add_row(index, row.role, _marker(row), short(row_text(row), width))
    console.print(table)
    if page.next_cursor is not None:
        console.print(f"next page: --cursor {page.next_cursor}", soft_wrap=True)
