"""``delete``: sessions by id or by user, through the protocol's ``delete_session``.

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

__all__ = ["delete_sessions"]


async def _targets(url: str, sessions: Sequence[str], users: Sequence[str]) -> list[str]:
    check_scope(sessions, users)
    async with open_reading(url) as store:
        for sid in sessions:
            if await store.get_session(sid) is None:
                raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
        return await session_ids(store, sessions, users)


def _confirmed(url: str, ids: list[str]) -> bool:
    """Ask on stderr, read the answer from stdin; only ``y`` or ``yes`` deletes."""
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    sys.stderr.write(f"delete {len(ids)} session(s) of {redact_url(url)}: {shown}? [y/N] ")
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
