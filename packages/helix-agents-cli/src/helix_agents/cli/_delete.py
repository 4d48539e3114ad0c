"""``delete``: sessions by id or by user, through the protocol's ``delete_session``;
``erase-user``: everything of one user, through ``erase_user``.

The sessions are found on a store opened for reading (a mistyped SQLite path
creates no file), confirmed, then deleted on a store opened for writing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from helix_agents.core import SessionNotFoundError, open_store
from helix_agents.core.backend import redact_url

from ._errors import CliError, ExitCode
from ._open import open_reading
from ._render import out_console, print_json
from ._scope import check_scope, session_ids

__all__ = ["delete_sessions", "erase_user"]


async def _targets(url: str, sessions: Sequence[str], users: Sequence[str]) -> list[str]:
    check_scope(sessions, users)
    async with open_reading(url) as store:
        for sid in sessions:
            if await store.get_session(sid) is None:
                raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
        return await session_ids(store, sessions, users)


def _confirmed(url: str, ids: list[str], what: str = "delete") -> bool:
    """Ask on stderr, read the answer from stdin; only ``y`` or ``yes`` deletes."""
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    sys.stderr.write(f"{what} {len(ids)} session(s) of {redact_url(url)}: {shown}? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):
        sys.stderr.write("\n")  # no answer (end of input): the error starts a line of its own
    return answer.strip().lower() in ("y", "yes")


async def delete_sessions(
    url: str, sessions: Sequence[str], users: Sequence[str], *, yes: bool, as_json: bool
) -> None:
    """Delete the named sessions and every session of ``users``, after a confirmation."""
    ids = await _targets(url, sessions, users)
    if ids and not yes and not _confirmed(url, ids):
        raise CliError("not confirmed: nothing deleted", ExitCode.FAILED)
    deleted: list[str] = []
    gone: list[str] = []
    if ids:
        async with open_store(url) as store:
            for sid in ids:
                (deleted if await store.delete_session(sid) else gone).append(sid)
    if as_json:
        print_json({"deleted": deleted, "already_gone": gone})
        return
    console = out_console()
    if not ids:
        console.print("no sessions to delete")
    for sid in deleted:
        console.print(f"deleted {sid}", soft_wrap=True, markup=False)
    for sid in gone:
        console.print(f"already gone {sid}", soft_wrap=True, markup=False)


async def erase_user(url: str, user: str, *, yes: bool, as_json: bool) -> None:
    """Erase every session of ``user`` and the user's scoped state, after a confirmation."""
    async with open_reading(url) as store:
        ids = await session_ids(store, [], [user])
    what = f"erase user {user!r} (and the user's scoped state):"
    if not yes and not _confirmed(url, ids, what):
        raise CliError("not confirmed: nothing erased", ExitCode.FAILED)
    async with open_store(url) as store:
        erased = await store.erase_user(user)
    if as_json:
        print_json({"user": user, "erased": erased})
        return
    console = out_console()
    console.print(f"erased user {user}: {len(erased)} session(s)", soft_wrap=True, markup=False)
    for sid in erased:
        console.print(f"erased {sid}", soft_wrap=True, markup=False)
