"""``page_messages``' reply from ``lua/r_page.lua``, held to core's page window.

The script computes the window itself, a copy of core's
:func:`~helix_agents.core.limits.page_window`: the window depends on the
session's first retained index and row count, which only the server knows when
it reads (rows are a Redis list, addressed from the first retained row, so a
cursor's absolute index becomes a list position only with ``first``). Handing
core's window to the script would take a read of ``first`` and ``count``
first: two round trips, and a window that a concurrent retention can move in
between. So the script answers the window it read with the rows, and the client
recomputes core's window from the same ``first`` and ``count``: a difference is
raised as a drift, never returned as a wrong page (docs/architecture.md).
"""

from __future__ import annotations

from typing import Any

from helix_agents.core import MessagePage, StateStoreError
from helix_agents.core.backend import next_page_cursor, page_window
from helix_agents.core.models import PageOrder

from ._codec import text, unpack_rows
from ._errors import SERVER

__all__ = ["read_page"]


def read_page(
    session_id: str, order: PageOrder, start: int | None, limit: int, reply: Any
) -> MessagePage:
    """The page of an ``r_page`` reply: ``'lo:hi:first:count'``, then the rows, one a line."""
    head, _, joined = text(reply).partition("\n")
    lo, hi, first, count = (int(v) for v in head.split(":"))
    rows = unpack_rows(joined)
    window = page_window(order, start, limit, first, count)
    if (lo, hi) != window or len(rows) != hi - lo:
        raise StateStoreError(
            f"session {session_id!r}: {SERVER} read {len(rows)} rows as [{lo}, {hi}) but core's "
            f"page window is {list(window)}: the server's copy of the rules has drifted from "
            "core; please report",
            session_id=session_id,
        )
    if order == "desc":
        rows.reverse()
    next_cursor = next_page_cursor(session_id, order, lo, hi, first, count)
    return MessagePage(messages=tuple(rows), next_cursor=next_cursor)
