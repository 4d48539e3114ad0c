"""How ADK's names map onto a store's: sessions, owners, scoped-state maps.

ADK keys a session by ``(app_name, user_id, session_id)``; the store has one id space.
Each name is the compact JSON text of a list, which is one-to-one: two different ADK
names never share a store name, whatever characters they hold.
"""

from __future__ import annotations

import json

__all__ = ["app_owner", "registry_owner", "store_session_id", "store_user_id", "user_key"]


def _name(*parts: str | None) -> str:
    return json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))


def store_session_id(app_name: str, user_id: str, session_id: str) -> str:
    """The store's id of an ADK session."""
    return _name(app_name, user_id, session_id)


def store_user_id(app_name: str, user_id: str) -> str:
    """The store's user of an ADK user: its listing, and the owner of its ``user:`` map."""
    return _name(app_name, user_id)


def app_owner(app_name: str) -> str:
    """The owner of an app's ``app:`` map."""
    return _name(app_name)


def registry_owner(app_name: str) -> str:
    """The owner of the app's map of users (keys: :func:`user_key`), for app-wide listings."""
    return _name(app_name, None)


def user_key(user_id: str) -> str:
    """A user's key in the registry (JSON text: never empty, as keys must not be)."""
    return json.dumps(user_id, ensure_ascii=False)
