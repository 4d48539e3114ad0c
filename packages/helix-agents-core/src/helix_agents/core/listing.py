"""The store-wide listing's filters and scan (docs/listing.md): checked once, matched in core.

An engine pages every session by id (``Engine.list_all``); core keeps the sessions
that pass the filters, reading at most :data:`SCAN_BUDGET` sessions per call, so a
call costs a bounded number of round trips however rare the matches are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from .cursors import encode_all_cursor
from .errors import ValidationError
from .inputs import check_id, check_json
from .models import ListedSession, ListedSessionsPage
from .sessiondoc import SessionDoc, check_filter_title, refuse_reserved

__all__ = [
    "FILTERED_BATCH",
    "USER_SCAN_BUDGET",
    "SCAN_BUDGET",
    "ListingFilter",
    "check_listing_filter",
    "public",
    "scan",
]

SCAN_BUDGET = 2_000
"""The most sessions one filtered call reads; a page cut short by it still has a cursor."""
FILTERED_BATCH = 200
"""Sessions read per engine call while filtering (a page's size when that is larger)."""
USER_SCAN_BUDGET = 400
"""The most sessions one filtered ``list_sessions`` call reads (one head read each)."""


def _canonical(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ListingFilter:
    """The checked filters of one listing; ``fingerprint`` binds its cursors to them."""

    user_id: str | None
    active_since: datetime | None
    metadata: tuple[tuple[str, str], ...]  # key, canonical JSON of the value
    fingerprint: str
    title: str | None = None  # casefolded

    @property
    def none(self) -> bool:
        """Whether every session passes."""
        return (
            self.user_id is None
            and self.active_since is None
            and not self.metadata
            and self.title is None
        )

    def matches(self, s: ListedSession) -> bool:
        """Owner equal; activity at or after ``active_since``; each metadata key present with
        an equal JSON value (same type: ``1``, ``1.0`` and ``true`` differ); the title
        holding the title filter, ignoring case (META-6)."""
        if self.user_id is not None and s.user_id != self.user_id:
            return False
        if self.active_since is not None and s.last_activity_at < self.active_since:
            return False
        return self.matches_doc(s.metadata, s.title)

    def matches_doc(self, metadata: Mapping[str, JsonValue], title: str | None) -> bool:
        """The metadata and title filters alone."""
        if self.title is not None and (title is None or self.title not in title.casefold()):
            return False
        return all(k in metadata and _canonical(metadata[k]) == v for k, v in self.metadata)


def public(s: ListedSession) -> ListedSession:
    """A listed session as an engine returns it, with its stored metadata split into the
    caller's keys and the title (docs/lifecycle.md)."""
    doc = SessionDoc(s.metadata)
    return s.model_copy(update={"metadata": doc.user, "title": doc.title})


def check_listing_filter(
    user_id: str | None,
    active_since: datetime | None,
    metadata: Mapping[str, JsonValue] | None,
    title: str | None = None,
) -> ListingFilter:
    """The filters, checked: an id, an aware datetime, a JSON object without the reserved
    key, a title text (``ValidationError``)."""
    check_id(user_id, "user_id", optional=True)
    if active_since is not None and (
        not isinstance(active_since, datetime) or active_since.utcoffset() is None
    ):
        raise ValidationError(
            f"active_since must be a timezone-aware datetime, got {active_since!r}"
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ValidationError(f"metadata must be a JSON object, got {type(metadata).__name__}")
    wanted = dict(metadata or {})
    check_json(wanted, "metadata")
    refuse_reserved(None, wanted, "metadata filter")
    text = check_filter_title(title)
    folded = None if text is None else text.casefold()
    pairs = tuple(sorted((k, _canonical(v)) for k, v in wanted.items()))
    since = None if active_since is None else active_since.isoformat()
    parts: list[object] = [user_id, since, pairs]
    if folded is not None:  # cursors of listings without it stay as they were
        parts.append(folded)
    raw = _canonical(parts).encode()
    fingerprint = hashlib.sha256(raw).hexdigest()[:16]
    return ListingFilter(user_id, active_since, pairs, fingerprint, folded)


async def scan(
    read: Callable[[str | None, int], Awaitable[Sequence[ListedSession]]],
    wanted: ListingFilter,
    after: str | None,
    first: int,
    expired: Callable[[ListedSession], bool] = lambda s: False,
) -> ListedSessionsPage:
    """One page: sessions after ``after`` by id that pass ``wanted``, read in batches.

    Sessions ``expired`` (on their stored metadata) are skipped (TTL-1). Unfiltered,
    every page but the last holds exactly ``first`` sessions. Filtered, a
    call stops after :data:`SCAN_BUDGET` sessions read; its page may then be short (even
    empty) and its cursor continues after the last session read.
    """
    batch = first + 1 if wanted.none else max(first + 1, FILTERED_BATCH)
    found: list[ListedSession] = []
    scanned = 0
    while True:
        got = await read(after, batch)
        for s in got:
            if not expired(s) and wanted.matches(s := public(s)):
                found.append(s)
                if len(found) > first:
                    cursor = encode_all_cursor(wanted.fingerprint, found[first - 1].id)
                    return ListedSessionsPage(sessions=tuple(found[:first]), next_cursor=cursor)
            after = s.id
        scanned += len(got)
        if len(got) < batch:
            return ListedSessionsPage(sessions=tuple(found), next_cursor=None)
        if scanned >= SCAN_BUDGET:
            assert after is not None
            cursor = encode_all_cursor(wanted.fingerprint, after)
            return ListedSessionsPage(sessions=tuple(found), next_cursor=cursor)
