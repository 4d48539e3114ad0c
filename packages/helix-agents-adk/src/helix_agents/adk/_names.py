"""How ADK's names map onto a store's: sessions, owners, scoped-state maps.

ADK keys a session by ``(app_name, user_id, session_id)``; the store has one id space.
Each name is the compact JSON text of a list, which is one-to-one: two different ADK
names never share a store name, whatever characters they hold.
"""

from __future__ import annotations

import json

from .errors import AdkValidationError

__all__ = [
    "adk_session_id",
    "app_owner",
    "check_names",
    "registry_owner",
    "store_session_id",
    "store_user_id",
    "user_key",
    "user_of",
]


def check_names(**names: object) -> None:
    """Refuse a name that is not a string (JSON would name it anyway, wrongly)."""
    for field, name in names.items():
        if not isinstance(name, str):
            raise AdkValidationError(f"{field} must be a string, got {type(name).__name__}")


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


def adk_session_id(sid: str, app_name: str, user_id: str) -> str | None:
    """The ADK id of store session ``sid`` if it is one of ``(app_name, user_id)``'s, else None.

    A session in the user's listing that the store made under another id (created
    through the store with the same owner) is not an ADK session.
    """
    parts = _parsed(sid)
    if not (isinstance(parts, list) and len(parts) == 3 and parts[:2] == [app_name, user_id]):
        return None
    session_id = parts[2]
    if not isinstance(session_id, str) or store_session_id(app_name, user_id, session_id) != sid:
        return None
    return session_id


def user_of(key: str) -> str | None:
    """The user a registry key names, or ``None`` for a key the service did not write."""
    user = _parsed(key)
    return user if isinstance(user, str) and user_key(user) == key else None


def _parsed(text: str) -> object:
    try:
        parsed: object = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed
