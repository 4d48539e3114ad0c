"""The store sessions the artifact and memory services keep per ADK user (ADKA-1, ADKM-1).

Each is named like every other name of the adapter, as compact JSON text, with four
parts: no ADK session (three parts) can ever hold its id.
"""

from __future__ import annotations

import json
from typing import Literal

from helix_agents.core import SessionExistsError, SessionInfo, SessionStateStore
from helix_agents.core.adapters import check_writable, mark, readable

from . import _names

__all__ = ["adk_session", "ensure_side_session", "owner_id", "readable_side_session", "side_id"]

Side = Literal["artifacts", "memory"]


def _text(*parts: str | int | None) -> str:
    return json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))


def side_id(app_name: str, user_id: str, side: Side) -> str:
    """The store id of the user's artifact log or memory archive."""
    return _text(app_name, user_id, None, side)


def owner_id(app_name: str, user_id: str, *parts: str | int | None) -> str:
    """The owner of a ``user`` map the services keep: the user's names, then ``parts``."""
    return _text(app_name, user_id, *parts)


async def ensure_side_session(store: SessionStateStore, sid: str, side: Side) -> SessionInfo:
    """The side session ``sid``, created with the ``adk`` mark if missing.

    Another adapter's session under that id is its ``ForeignSessionError``.
    """
    info = await store.get_session(sid)
    if info is None:
        try:
            return await store.create_session(sid, metadata=mark("adk", {"adk_side": side}))
        except SessionExistsError:  # created at once by another caller
            info = await store.get_session(sid)
            if info is None:
                return await ensure_side_session(store, sid, side)
    check_writable(info, "adk")
    return info


async def readable_side_session(store: SessionStateStore, sid: str) -> SessionInfo | None:
    """The side session ``sid`` if it exists and is not another adapter's."""
    info = await store.get_session(sid)
    return info if info is not None and readable(info, "adk") else None


async def adk_session(
    store: SessionStateStore, app_name: str, user_id: str, session_id: str
) -> SessionInfo | None:
    """The store session of an ADK session, if the store holds one (any adapter's)."""
    return await store.get_session(_names.store_session_id(app_name, user_id, session_id))
