"""``erase_adk_user``: one ADK user's sessions, memory, artifacts and maps, erased (ADKF-11)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from helix_agents.core import (
    MessageCommit,
    ScopedStateDelta,
    SessionStateStore,
)
from helix_agents.core.adapters import check_writable

from . import _names
from ._artifact_log import ARTIFACT_FIELD
from ._checks import refusing
from ._side_sessions import ensure_side_session, owner_id, side_id
from .memory import MEMORY_SESSION_FIELD

__all__ = ["erase_adk_user"]

_PAGE = 500


async def erase_adk_user(store: SessionStateStore, app_name: str, user_id: str) -> list[str]:
    """Erase everything ``HelixSessionService``, ``HelixMemoryService`` and
    ``HelixArtifactService`` keep for ``(app_name, user_id)``; return the store ids of the
    sessions erased, sorted (docs/integrations/adk.md, ADKF-11).

    The user's key in the app's map of users stays, set to ``null``: a map has no remove.
    """
    _names.check_names(app_name=app_name, user_id=user_id)
    user = _names.store_user_id(app_name, user_id)
    sides = [side_id(app_name, user_id, "artifacts"), side_id(app_name, user_id, "memory")]
    with refusing():
        for sid in sides:
            info = await store.get_session(sid)
            if info is not None:
                check_writable(info, "adk")
        owners = await _owners(store, app_name, user_id)
        await _unregister(store, app_name, user_id, sides[1])
        erased = await store.erase_user(user)
        for sid in sides:
            if await store.delete_session(sid):
                erased.append(sid)
        for owner in sorted(owners):
            await store.erase_user(owner)
    return sorted(erased)


async def _owners(store: SessionStateStore, app_name: str, user_id: str) -> set[str]:
    """The owners of every ``user`` map the memory and artifact services keep for the user."""
    sessions: set[str | None] = {None}
    cursor: str | None = None
    while True:
        page = await store.list_sessions(
            _names.store_user_id(app_name, user_id), first=_PAGE, cursor=cursor
        )
        for summary in page.sessions:
            sessions.add(_names.adk_session_id(summary.id, app_name, user_id))
        if (cursor := page.next_cursor) is None:
            break
    async for fields in _fields(store, side_id(app_name, user_id, "memory")):
        named = fields.get(MEMORY_SESSION_FIELD)
        if isinstance(named, str):
            sessions.add(named)
    owners = {owner_id(app_name, user_id, s, "memory") for s in sessions}
    async for fields in _fields(store, side_id(app_name, user_id, "artifacts")):
        saved = fields.get(ARTIFACT_FIELD)
        if not isinstance(saved, dict):
            continue
        session_id, filename, version = (
            saved.get(k) for k in ("session_id", "filename", "version")
        )
        if not (session_id is None or isinstance(session_id, str)) or not isinstance(filename, str):
            continue
        owners.add(owner_id(app_name, user_id, session_id, filename, "versions"))
        if isinstance(version, int):
            owners.add(owner_id(app_name, user_id, session_id, filename, version))
    return owners


async def _fields(store: SessionStateStore, sid: str) -> AsyncIterator[dict[str, object]]:
    """The provider fields of every row of side session ``sid`` (none if it is missing)."""
    if await store.get_session(sid) is None:
        return
    cursor: str | None = None
    while True:
        page = await store.page_messages(sid, limit=_PAGE, cursor=cursor)
        for row in page.messages:
            yield dict(row.__pydantic_extra__ or {})
        if (cursor := page.next_cursor) is None:
            return


async def _unregister(store: SessionStateStore, app_name: str, user_id: str, sid: str) -> None:
    """Set the user's key in the app's map of users to ``null`` (a commit on ``sid``)."""
    owner = _names.registry_owner(app_name)
    key = _names.user_key(user_id)
    if (await store.get_scoped_state("app", owner)).get(key) is None:
        return
    await ensure_side_session(store, sid, "memory")
    delta = ScopedStateDelta(scope="app", owner=owner, changes={key: None})
    await store.append_messages(sid, MessageCommit(scoped_state=(delta,)))
