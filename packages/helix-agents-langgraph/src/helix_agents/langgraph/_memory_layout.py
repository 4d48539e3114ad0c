"""Where the memory store keeps an item, and what its record holds (LGM-1, LGM-2, LGM-5).

An item's versions are records of the memory session with ids
``m␟<label>␟…␟<label>␟␞<key>␟<version>``: a namespace prefix is an id prefix, and
the greatest version of a key is the item. A version is 16 hex digits of microseconds
then 8 random ones; a TTL refresh of it appends ``+`` and 16 hex digits of its own
time, so it sorts after its version and below any later put's.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.store.base import Item, SearchItem
from pydantic import JsonValue

from helix_agents.core.limits import MAX_ID_BYTES

__all__ = [
    "ITEMS",
    "KEY_MARK",
    "SEP",
    "VERSION_CHARS",
    "Stored",
    "id_fits",
    "item_prefix",
    "namespace_prefix",
    "namespace_of_id",
    "now_us",
    "refresh_version",
    "version_after",
]

SEP = "\x1f"
KEY_MARK = "\x1e"
ITEMS = f"m{SEP}"
VERSION_CHARS = 16 + 8 + 1 + 16  # the longest: a refresh of a version
_MICROS = 16


def now_us() -> int:
    """The wall clock in microseconds."""
    return time.time_ns() // 1000


def namespace_prefix(labels: tuple[str, ...]) -> str:
    """The id prefix of every item whose namespace starts with ``labels``."""
    return ITEMS + "".join(label + SEP for label in labels)


def item_prefix(namespace: tuple[str, ...], key: str) -> str:
    """The id prefix of every version of one item."""
    return f"{namespace_prefix(namespace)}{KEY_MARK}{key}{SEP}"


def id_fits(namespace: tuple[str, ...], key: str) -> bool:
    """Whether every version id of the item stays within core's id limit."""
    return len(item_prefix(namespace, key).encode()) + VERSION_CHARS <= MAX_ID_BYTES


def namespace_of_id(record_id: str) -> tuple[str, ...]:
    """The namespace of an item record's id."""
    labels = record_id[len(ITEMS) : record_id.index(KEY_MARK)]
    return tuple(labels.split(SEP)[:-1])


def version_after(read: str | None, at_us: int) -> str:
    """A put's version: ``at_us``, or above the version ``read`` if that is later (LGM-2)."""
    floor = 0 if read is None else int(read[:_MICROS], 16) + 1
    return f"{max(at_us, floor):0{_MICROS}x}{secrets.randbits(32):08x}"


def refresh_version(version: str, at_us: int) -> str:
    """A TTL refresh of ``version``: after it, below every greater version (LGM-5)."""
    return f"{version[:24]}+{at_us:0{_MICROS}x}"


def _when(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)


@dataclass(frozen=True, slots=True)
class Stored:
    """One version of an item as its record holds it."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_us: int
    updated_us: int
    ttl: float | None  # minutes
    expires_us: int | None

    def live(self, at_us: int) -> bool:
        """Whether the item has not expired at ``at_us``."""
        return self.expires_us is None or self.expires_us > at_us

    def state(self) -> JsonValue:
        """The record's JSON."""
        return {
            "ns": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created": self.created_us,
            "updated": self.updated_us,
            "ttl": self.ttl,
            "expires": self.expires_us,
        }

    @classmethod
    def load(cls, state: Any) -> Stored:
        """The version a record's JSON holds; ``ValueError``/``KeyError``/``TypeError`` if it
        is not one."""
        ttl, expires = state["ttl"], state["expires"]
        value = state["value"]
        if not isinstance(value, dict):
            raise TypeError("value is not an object")
        return cls(
            namespace=tuple(str(label) for label in state["ns"]),
            key=str(state["key"]),
            value=value,
            created_us=int(state["created"]),
            updated_us=int(state["updated"]),
            ttl=None if ttl is None else float(ttl),
            expires_us=None if expires is None else int(expires),
        )

    def item(self) -> Item:
        """As LangGraph's ``Item``."""
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=_when(self.created_us),
            updated_at=_when(self.updated_us),
        )

    def search_item(self) -> SearchItem:
        """As LangGraph's ``SearchItem`` (no score: the search is not semantic, LGM-3)."""
        return SearchItem(
            namespace=self.namespace,
            key=self.key,
            value=self.value,
            created_at=_when(self.created_us),
            updated_at=_when(self.updated_us),
        )
