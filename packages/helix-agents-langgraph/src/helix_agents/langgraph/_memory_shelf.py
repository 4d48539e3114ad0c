"""The memory store's operations on its one session (LGM-1..LGM-5, LGM-9)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langgraph.store.base import ListNamespacesOp, PutOp, SearchOp

from helix_agents.core import Checkpoint as Record
from helix_agents.core import SessionStateStore
from helix_agents.core.adapters import readable
from helix_agents.core.limits import MAX_CHECKPOINT_PAGE

from ._memory_layout import (
    ITEMS,
    KEY_MARK,
    SEP,
    Stored,
    item_prefix,
    namespace_of_id,
    namespace_prefix,
    now_us,
    refresh_version,
    version_after,
)
from ._memory_match import matches_conditions, matches_filter, matches_query, words
from ._threads import ADAPTER, Threads
from .errors import CorruptRecordError

__all__ = ["Shelf"]

_MINUTE_US = 60_000_000
_SLACK = 8  # versions one key rarely exceeds: a put reads them all in one page of this size


def _item_of(record_id: str) -> str:
    """The id prefix of the item a version belongs to."""
    return record_id[: record_id.rindex(SEP) + 1]


def _version_of(record_id: str) -> str:
    return record_id[record_id.rindex(SEP) + 1 :]


def _expiry(ttl: float | None, at_us: int) -> int | None:
    return None if ttl is None else at_us + round(ttl * _MINUTE_US)


class Shelf:
    """Items as versioned records of one session; a missing session holds none."""

    def __init__(self, store: SessionStateStore, session_id: str) -> None:
        self.session_id = session_id
        self._store = store
        self._threads = Threads(store)
        self._ours = False  # the session was found the adapter's (or shared) once

    # Reads

    async def readable(self) -> bool:
        """Whether the memory session may be read: missing (empty), ours or shared (LGM-9)."""
        if self._ours:
            return True
        info = await self._store.get_session(self.session_id)
        if info is None:
            return True
        self._ours = readable(info, ADAPTER)
        return self._ours

    def _load(self, record: Record) -> Stored:
        try:
            return Stored.load(record.state)
        except (KeyError, TypeError, ValueError) as exc:
            raise self._corrupt(record.checkpoint_id, str(exc)) from None

    def _corrupt(self, record_id: str, why: str) -> CorruptRecordError:
        """A record under the items' prefix that is not an item (LGM-9)."""
        return CorruptRecordError(
            f"memory {self.session_id!r}: record {record_id!r} is not an item ({why})",
            session_id=self.session_id,
            record=record_id,
        )

    async def current(self, prefix: str) -> tuple[str, Stored] | None:
        """The greatest version under an item's prefix, with its id, or ``None``."""
        page = await self._threads.page(self.session_id, prefix, None, 1)
        return (page[0].checkpoint_id, self._load(page[0])) if page else None

    async def get(self, namespace: tuple[str, ...], key: str, refresh: bool) -> Stored | None:
        """The live item, its TTL moved on when ``refresh`` (LGM-1, LGM-5)."""
        found = await self.current(item_prefix(namespace, key))
        at = now_us()
        if found is None or not found[1].live(at):
            return None
        if refresh and found[1].ttl is not None:
            await self._refresh(*found, at)
        return found[1]

    async def _walk(
        self, prefix: str, before: str | None = None, first: int = MAX_CHECKPOINT_PAGE
    ) -> AsyncIterator[Record]:
        """Every record under ``prefix`` below ``before``, greatest first: a first page of
        ``first`` records (a search that wants ten reads few), then full pages."""
        size = first
        while True:
            page = await self._threads.page(self.session_id, prefix, before, size)
            for record in page:
                yield record
            if len(page) < size:
                return
            before, size = page[-1].checkpoint_id, MAX_CHECKPOINT_PAGE

    async def _scan(
        self, prefix: str, first: int = MAX_CHECKPOINT_PAGE
    ) -> AsyncIterator[tuple[list[str], Stored]]:
        """Each item under ``prefix``, greatest first: the ids of its versions, its greatest."""
        ids: list[str] = []
        head: Stored | None = None
        async for record in self._walk(prefix, first=first):
            rid = record.checkpoint_id
            if ids and _item_of(rid) == _item_of(ids[0]):
                ids.append(rid)
                continue
            if head is not None:
                yield ids, head
            ids, head = [rid], self._load(record)
        if head is not None:
            yield ids, head

    async def search(self, op: SearchOp) -> list[Stored]:
        """The live items under the op's prefix matching its filter and query (LGM-3)."""
        wanted = words(op.query) if op.query else []
        found: list[tuple[str, Stored]] = []
        stop = op.offset + op.limit
        at = now_us()
        if stop:
            first = min(MAX_CHECKPOINT_PAGE, stop + _SLACK)
            async for ids, item in self._scan(namespace_prefix(op.namespace_prefix), first):
                if not item.live(at):
                    continue
                if op.filter and not matches_filter(item.value, op.filter):
                    continue
                if wanted and not matches_query(item.value, wanted):
                    continue
                found.append((ids[0], item))
                if len(found) == stop:
                    break
        kept = found[op.offset :]
        if op.refresh_ttl:
            for rid, item in kept:
                if item.ttl is not None:
                    await self._refresh(rid, item, at)
        return [item for _, item in kept]

    async def namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """The namespaces holding a live item, filtered, cut and paged (LGM-4)."""
        conditions = op.match_conditions or ()
        literal: list[str] = []
        for condition in conditions[:1]:
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    literal.append(label)
        scope = namespace_prefix(tuple(literal))
        seen: set[tuple[str, ...]] = set()
        before: str | None = None
        at = now_us()
        while True:
            page = await self._threads.page(self.session_id, scope, before, 1)
            if not page:
                break
            rid = page[0].checkpoint_id
            if KEY_MARK not in rid:
                raise self._corrupt(rid, "no key in its id")
            namespace = namespace_of_id(rid)
            own = namespace_prefix(namespace) + KEY_MARK
            if matches_conditions(namespace, conditions) and await self._holds_live(own, at):
                seen.add(namespace if op.max_depth is None else namespace[: op.max_depth])
            before = own
        return sorted(seen)[op.offset : op.offset + op.limit]

    async def _holds_live(self, prefix: str, at: int) -> bool:
        async for _, item in self._scan(prefix, _SLACK):
            if item.live(at):
                return True
        return False

    # Writes

    async def _save(self, record_id: str, item: Stored) -> None:
        await self._threads.save(self.session_id, record_id, item.state())
        self._ours = True  # created with the mark, or found writable

    async def _delete(self, ids: list[str]) -> None:
        await self._threads.delete(self.session_id, ids)

    async def _check_writable(self) -> None:
        """``ForeignSessionError`` for another adapter's session (LGM-9)."""
        if not self._ours:
            await self._threads.check_writable(self.session_id)

    async def put(self, op: PutOp) -> None:
        """Save a new version above the one read, then drop those below it (LGM-1, LGM-2)."""
        await self._check_writable()
        prefix = item_prefix(op.namespace, op.key)
        if op.value is None:
            await self._delete([rid async for rid in self._ids(prefix, None)])
            return
        versions = await self._threads.page(self.session_id, prefix, None, _SLACK)
        found = (versions[0].checkpoint_id, self._load(versions[0])) if versions else None
        at = now_us()
        read = None if found is None else _version_of(found[0])
        created = at if found is None or not found[1].live(at) else found[1].created_us
        record_id = prefix + version_after(read, at)
        ttl = None if op.ttl is None else float(op.ttl)
        value: dict[str, Any] = dict(op.value)
        await self._save(
            record_id, Stored(op.namespace, op.key, value, created, at, ttl, _expiry(ttl, at))
        )
        if len(versions) < _SLACK:  # every version there was: all below the new one
            await self._delete([record.checkpoint_id for record in versions])
        else:
            await self._delete([rid async for rid in self._ids(prefix, record_id)])

    async def _ids(self, prefix: str, before: str | None) -> AsyncIterator[str]:
        async for record in self._walk(prefix, before):
            yield record.checkpoint_id

    async def _refresh(self, record_id: str, item: Stored, at: int) -> None:
        """Move the item's expiry to ``at`` plus its TTL, by a refresh of its version."""
        await self._check_writable()
        prefix = _item_of(record_id)
        new_id = prefix + refresh_version(_version_of(record_id), at)
        if new_id <= record_id:  # a refresh at the same microsecond: nothing to move
            return
        moved = Stored(
            item.namespace,
            item.key,
            item.value,
            item.created_us,
            item.updated_us,
            item.ttl,
            _expiry(item.ttl, at),
        )
        await self._save(new_id, moved)
        await self._delete([rid async for rid in self._ids(prefix, new_id)])

    async def sweep(self) -> int:
        """Delete the versions of every expired item, as read; how many items (LGM-5)."""
        await self._check_writable()
        at = now_us()
        expired: list[str] = []
        swept = 0
        async for ids, item in self._scan(ITEMS):
            if not item.live(at):
                expired.extend(ids)
                swept += 1
        await self._delete(expired)
        return swept
