"""Writing an export file: line by line, one session read at a time (EXP-2..EXP-5)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from typing import Any

from ..dumps import SessionDump
from ..errors import session_not_found
from ..protocol import SessionStateStore
from ..seam import Engine
from ._records import FORMAT, VERSION, dumps, map_record, session_records
from ._restore import engine_of

__all__ = ["dump_session", "export_lines"]


async def dump_session(store: SessionStateStore, session_id: str) -> SessionDump | None:
    """Every record the store holds of one session, read at one version (DMP-1): what an
    export writes of it, as data (queued and delivered items, resolved approvals, outputs
    with their text); ``None`` if the session does not exist. Reads every row: a caller
    showing a long session reads its pages instead. A store whose engine cannot dump
    refuses with :class:`~helix_agents.core.errors.StoreMisconfiguredError`, a store not
    built on ``StoreBase`` with :class:`~helix_agents.core.ValidationError`."""
    engine = await engine_of(store)
    return await engine.dump(session_id)


async def export_lines(
    store: SessionStateStore,
    session_ids: Iterable[str],
    *,
    whole_store: bool,
    source: str | None = None,
) -> AsyncIterator[str]:
    """The lines of an export file of the sessions ``session_ids``: a header, each
    session's block, the app and user maps of scoped state (all of them if
    ``whole_store``, else every app map and the user maps of the sessions' users), then
    the ``end`` record with the counts. A session that is gone when its turn comes is a
    :class:`~helix_agents.core.SessionNotFoundError`."""
    engine = await engine_of(store)
    kind = type(engine)
    if kind.dump is Engine.dump or kind.scoped_maps is Engine.scoped_maps:
        await Engine.dump(engine, "")  # the default: refuses, naming the store
    header: dict[str, Any] = {"type": FORMAT, "version": VERSION}
    if source is not None:
        header["source"] = source
    header["exported_at"] = datetime.now(UTC).isoformat()
    yield dumps(header)
    users: set[str] = set()
    sessions = records = 0
    for sid in session_ids:
        dump = await engine.dump(sid)
        if dump is None:
            raise session_not_found(sid)
        if dump.snapshot.user_id is not None:
            users.add(dump.snapshot.user_id)
        for record in session_records(dump):
            records += record["type"] != "session"
            yield dumps(record)
        sessions += 1
    maps = 0
    for scope, owner, values in await engine.scoped_maps():
        if whole_store or scope == "app" or owner in users:
            yield dumps(map_record(scope, owner, values))
            maps += 1
    yield dumps({"type": "end", "sessions": sessions, "maps": maps, "records": records})
