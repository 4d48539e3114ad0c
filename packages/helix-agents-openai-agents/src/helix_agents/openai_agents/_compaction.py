"""The compaction snapshot: the SDK's hook to replace a suffix of history atomically.

``OpenAIResponsesCompactionSession`` reads the newest rows, has them
summarised, then asks to replace them with the summary. The replacement is one
``replace_messages`` call that expects the row count the snapshot saw, after
checking that the suffix still holds the very rows it read (each row has its
own id); a changed suffix refuses it (``False``), as the SDK's backends do. With
``archive`` the rows it replaces go to the session's archive (CS-19).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agents.memory.session import _CompactionSnapshot

from helix_agents.core import (
    Message,
    MessageCountConflictError,
    SessionNotFoundError,
    SessionStateStore,
)

from ._items import decode_item, encode_items

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["read_snapshot"]

_READ_ATTEMPTS = 4


def _ids(rows: Sequence[Message]) -> list[str | None]:
    return [getattr(row, "id", None) for row in rows]


async def read_snapshot(
    store: SessionStateStore,
    session_id: str,
    limit: int,
    prune_prefix: Callable[[TResponseInputItem], bool] | None,
    check_open: Callable[[], None],
    archive: bool = False,
    fence_run_id: str | None = None,
) -> _CompactionSnapshot | None:
    """The newest ``limit`` items with their replacement, or ``None`` if it cannot be atomic.

    ``check_open`` runs before the replacement writes (it raises once the session is closed);
    ``archive``: the replacement archives the rows it cuts (the kept prefix is carried by id);
    ``fence_run_id``: it is refused once that run is superseded (``RunSupersededError``).
    """
    if limit <= 0:
        return None
    for _ in range(_READ_ATTEMPTS):
        try:
            count = await store.get_message_count(session_id)
            rows = await store.get_messages(session_id, limit=limit)
            settled = await store.get_message_count(session_id) == count
        except SessionNotFoundError:
            count, rows, settled = 0, [], True
        if settled:
            break
    else:
        return None
    items = [decode_item(row, session_id) for row in rows]
    if any(item is None for item in items):
        # Rows another runtime wrote sit in the window: no item-for-row replacement.
        return None
    complete = len(rows) == count

    async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
        check_open()
        expected = rows[start:]
        if not expected:
            return False
        new_rows = encode_items(output, session_id)
        keep = count - len(expected)
        try:
            cut, carried = keep, []
            if prune_prefix is None:
                current = await store.get_messages(session_id, limit=len(expected))
                if _ids(current) != _ids(expected):
                    return False
            else:
                everything = await store.get_messages(session_id)
                if len(everything) != count or _ids(everything[keep:]) != _ids(expected):
                    return False
                expired = 0
                for row in everything[:keep]:
                    item = decode_item(row, session_id)
                    if item is None or not prune_prefix(item):
                        break
                    expired += 1
                if expired:
                    # Rewrite the log without its expired prefix, in the same one commit.
                    cut, carried = 0, everything[expired:keep]
            await store.replace_messages(
                session_id,
                cut,
                [*carried, *new_rows],
                expect_message_count=count,
                archive=archive,
                fence_run_id=fence_run_id,
            )
            return True
        except (MessageCountConflictError, SessionNotFoundError):
            return False

    return _CompactionSnapshot(
        items=[item for item in items if item is not None],
        complete=complete,
        replace_suffix=replace_suffix,
    )
