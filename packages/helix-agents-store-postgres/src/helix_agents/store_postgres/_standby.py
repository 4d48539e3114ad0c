"""Reads on a hot standby with read-your-writes (docs/scaling.md, FO-11, FO-12).

Each write's statement also returns its transaction id and WAL insert position
(same round trip). :class:`Standby` keeps, per session, the latest such commit
not yet seen on the standby; a read there first waits, polling, until that
commit is visible in the standby's snapshot.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ._pool import Connections, Row
from .errors import ReplicationLagError

__all__ = ["KEPT", "Standby", "lsn_text"]

KEPT = 4096
"""Sessions whose unconfirmed commit is kept exactly; older ones fold into a WAL position."""

# On a server not in recovery (a promoted standby) every commit is visible.
_CAUGHT_UP = (
    b"SELECT pg_last_wal_replay_lsn()::text, NOT pg_is_in_recovery()"
    b" OR (coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)"
    b" AND coalesce((SELECT bool_and(pg_visible_in_snapshot(x, pg_current_snapshot()))"
    b" FROM unnest(%s::text[]::xid8[]) x), true))"
)
_FIRST_POLL = 0.002
_MAX_POLL = 0.05


def lsn(text: str) -> int:
    """A WAL position ``X/Y`` as an integer."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def lsn_text(value: int) -> str:
    """An integer WAL position as PostgreSQL writes it."""
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


class Standby:
    """The standby's connections, and the store's commits it has not been seen to apply."""

    __slots__ = ("connections", "floor", "pending", "wait")

    def __init__(self, connections: Connections, wait: float) -> None:
        self.connections = connections
        self.wait = wait
        self.pending: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self.floor = 0  # a WAL position the replay must reach (commits no longer kept)

    def note(self, session_id: str, xid: str | None, position: str | None) -> None:
        """Remember a commit of ``session_id`` (``xid`` ``None``: nothing was written)."""
        if xid is None or position is None:
            return
        pending = self.pending
        pending[session_id] = (xid, lsn(position))
        pending.move_to_end(session_id)
        if len(pending) > KEPT:
            _, (_, oldest) = pending.popitem(last=False)
            self.floor = max(self.floor, oldest)

    async def rows(
        self, query: bytes, params: Sequence[Any], what: str, session_id: str | None
    ) -> list[Row]:
        """The read on the standby once the commits it must see are visible there
        (of ``session_id``, or of every session when it is ``None``)."""
        await self._caught_up(what, session_id)
        return await self.connections.rows(query, params, what, session_id, False)

    async def _caught_up(self, what: str, session_id: str | None) -> None:
        if session_id is None:
            waiting = dict(self.pending)
        else:
            one = self.pending.get(session_id)
            waiting = {} if one is None else {session_id: one}
        floor = self.floor
        if not waiting and not floor:
            return
        needed = max([floor, *(position for _, position in waiting.values())])
        params = (lsn_text(floor), [xid for xid, _ in waiting.values()])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait
        pause = _FIRST_POLL
        while True:
            ((replayed, seen),) = await self.connections.rows(
                _CAUGHT_UP, params, f"{what}: waiting for the standby", session_id, False
            )
            if seen:
                break
            left = deadline - loop.time()
            if left <= 0:
                raise ReplicationLagError(
                    f"{what}: the standby (replayed up to {replayed}) has not applied the "
                    f"store's commits (WAL {lsn_text(needed)}) within "
                    f"standby_wait={self.wait:g} s",
                    session_id=session_id,
                )
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, _MAX_POLL)
        for sid, entry in waiting.items():  # unless a newer commit took its place meanwhile
            if self.pending.get(sid) is entry:
                del self.pending[sid]
        if self.floor == floor:
            self.floor = 0
