"""Helpers that read and write around the service, straight through the store.

Names are spelled here from docs/integrations/adk.md (compact JSON lists), not taken
from the adapter, so a test of how the service stores things does not trust it.
"""

from __future__ import annotations

import json
from typing import Any

from helix_agents.core import SessionNotFoundError, SessionStateStore

APP = "trips"


def name(*parts: str | None) -> str:
    """The store's name of an ADK name: the compact JSON text of its parts."""
    return json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))


def sid_of(user: str, session: str, app: str = APP) -> str:
    """The store's id of ADK session ``(app, user, session)``."""
    return name(app, user, session)


async def snapshot(store: SessionStateStore, sid: str) -> dict[str, Any]:
    """Everything the service may write for session ``sid`` of ``APP``, read from the store."""
    parts = json.loads(sid)
    app, user = parts[0], parts[1]
    maps = {
        "app": await store.get_scoped_state("app", name(app)),
        "user": await store.get_scoped_state("user", name(app, user)),
        "registry": await store.get_scoped_state("app", name(app, None)),
    }
    info = await store.get_session(sid)
    if info is None:
        return {"session": None, **maps}
    try:
        own = await store.get_scoped_state("session", sid)
    except SessionNotFoundError:
        own = None
    rows = [row.model_dump() for row in await store.get_messages(sid)]
    return {
        "session": (info.message_count, info.metadata, info.user_id),
        "rows": rows,
        "own": own,
        **maps,
    }
