"""Which sessions a command covers: named ones, every session of the named users, or,
for the commands that only read, every session of the store (docs/listing.md)."""

from __future__ import annotations

from collections.abc import Sequence

from helix_agents.core import SessionStateStore

from ._errors import CliError, ExitCode

__all__ = ["check_scope", "session_ids"]


def check_scope(sessions: Sequence[str], users: Sequence[str]) -> None:
    """A usage error (before any store is opened) unless sessions or users are named."""
    if not sessions and not users:
        raise CliError(
            "name sessions or --user: a delete never covers the whole store by default",
            ExitCode.USAGE,
        )


async def session_ids(
    store: SessionStateStore,
    sessions: Sequence[str],
    users: Sequence[str],
    *,
    whole_store: bool = False,
) -> list[str]:
    """``sessions``, then each user's sessions (most recent first), without repeats; with
    neither, and ``whole_store``, every session of the store in id order."""
    if whole_store and not sessions and not users:
        return await _every_session(store)
    check_scope(sessions, users)
    found = dict.fromkeys(sessions)
    for user in users:
        cursor: str | None = None
        while True:
            page = await store.list_sessions(user, first=100, cursor=cursor)
            found.update(dict.fromkeys(s.id for s in page.sessions))
            cursor = page.next_cursor
            if cursor is None:
                break
    return list(found)


async def _every_session(store: SessionStateStore) -> list[str]:
    ids: list[str] = []
    cursor: str | None = None
    while True:
        page = await store.list_all_sessions(first=500, cursor=cursor)
        ids += [s.id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            return ids
