"""``export``: every record of the sessions named, and the scoped state they share, as an
export file (docs/export.md) written line by line to stdout."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from helix_agents.core import SessionNotFoundError
from helix_agents.core.backend import redact_url
from helix_agents.core.transfer import export_lines

from ._open import open_reading
from ._progress import progress_bar
from ._scope import session_ids

__all__ = ["export_sessions"]


async def export_sessions(url: str, sessions: Sequence[str], users: Sequence[str]) -> None:
    """Write the named sessions and every session of ``users`` (with neither: the whole
    store) to stdout."""
    out = sys.stdout
    async with open_reading(url) as store:
        ids = await session_ids(store, sessions, users, whole_store=True)
        for sid in sessions:
            # A missing session ends the command before the file has a first line.
            if await store.get_session(sid) is None:
                raise SessionNotFoundError(f"session {sid!r} does not exist", session_id=sid)
        whole_store = not sessions and not users
        with progress_bar() as bar:
            task = bar.add_task("export", total=len(ids))
            lines = export_lines(store, ids, whole_store=whole_store, source=redact_url(url))
            async for line in lines:
                out.write(line)
                if line.startswith('{"type":"session"'):
                    bar.advance(task)
    out.flush()
