"""Which sessions a command covers: named ones, and every session of the named users.

The protocol lists sessions per user only, so "every session in the store" is
not something a command can reach through it (docs/cli.md, "What the protocol
cannot tell").
"""

from __future__ import annotations

from collections.abc import Sequence

from helix_agents.core import SessionStateStore

from ._errors import CliError, ExitCode

__all__ = ["check_scope", "session_ids"]


def check_scope(sessions: Sequence[str], users: Sequence[str]) -> None:
    """A usage error (before any store is opened) unless sessions or users are named."""
    if not sessions and not users:
        raise CliError(
            "name sessions or --user: the store protocol lists sessions per user only",
            ExitCode.USAGE,
        )


async def session_ids(
    store: SessionStateStore, sessions: Sequence[str], users: Sequence[str]
) -> list[str]:
    """``sessions``, then each user's sessions (most recent first), without repeats."""
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
