"""The run index: which checkpoints each LangGraph run wrote, in one reserved session.

``delete_for_runs`` spans every thread, and a store cannot list its sessions,
so the saver records each checkpoint that carries a ``run_id`` in the session
:data:`RUN_INDEX` (docs/integrations/langgraph.md), as store checkpoints:

* ``r␟<sha256(run)>␟<sha256(thread, ns, checkpoint id)>`` — one checkpoint of
  the run (insert-once), so a run's checkpoints are one prefix;
* ``d␟<sha256(run)>`` — the run was deleted; a put of that run that lands
  later removes what it wrote.

The hashes keep every id short whatever the run and thread ids are; each
record's state holds the ids themselves.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import JsonValue

from helix_agents.core import ValidationError

from ._layout import SEP, checkpoint_key, claim_key, writes_prefix
from ._threads import Threads

__all__ = ["RUN_INDEX", "Entry", "RunIndex", "check_thread"]

RUN_INDEX = f"langgraph{SEP}runs"
"""The session that holds the run index; no thread may have this id."""


def check_thread(thread_id: str) -> str:
    """``thread_id``, unless it is the run index's session."""
    if thread_id == RUN_INDEX:
        raise ValidationError(f"thread id {thread_id!r} is reserved for the run index")
    return thread_id


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _run_prefix(run: str) -> str:
    return f"r{SEP}{_digest(run)}{SEP}"


def _deleted_key(run: str) -> str:
    return f"d{SEP}{_digest(run)}"


class Entry(NamedTuple):
    """What the index records of one checkpoint of a run."""

    run: str
    thread: str
    ns: str
    id: str
    parent: str | None

    @property
    def key(self) -> str:
        """The id of its record in the index."""
        return _run_prefix(self.run) + _digest(self.thread, self.ns, self.id)


class RunIndex:
    """The run index of the threads in one store."""

    def __init__(self, threads: Threads) -> None:
        self._threads = threads

    async def add(self, entry: Entry) -> bool:
        """Record ``entry``, insert-once, before its checkpoint is written; whether it is new."""
        state: JsonValue = dict(entry._asdict())
        return await self._threads.save(RUN_INDEX, entry.key, state)

    async def forget(self, entries: Sequence[Entry]) -> None:
        """Delete ``entries``; call after deleting their checkpoints."""
        await self._threads.delete(RUN_INDEX, [entry.key for entry in entries])

    async def deleted(self, run: str) -> bool:
        """Whether ``delete_for_runs`` was called for ``run``."""
        state = await self._threads.get(RUN_INDEX, _deleted_key(run))
        return isinstance(state, dict) and state.get("run") == run

    async def delete(self, runs: Sequence[str]) -> None:
        """Delete every checkpoint of ``runs``, their writes and claims, then their entries.

        Each run is marked deleted first, so that a put of it racing this call
        either is seen here or sees the mark (and removes itself).
        """
        for run in dict.fromkeys(runs):
            await self._threads.save(RUN_INDEX, _deleted_key(run), {"run": run})
            done: list[str] = []
            foreign: dict[str, bool] = {}
            async for record in self._threads.walk(RUN_INDEX, _run_prefix(run)):
                entry = _entry(record.state)
                if entry is not None and entry.run == run:
                    if entry.thread not in foreign:  # another adapter's session now (ADP-2)
                        foreign[entry.thread] = await self._threads.foreign(entry.thread)
                    if not foreign[entry.thread]:
                        await self.remove(entry.thread, entry.ns, entry.id, entry.parent)
                done.append(record.checkpoint_id)
            await self._threads.delete(RUN_INDEX, done)

    async def remove(self, thread: str, ns: str, checkpoint_id: str, parent: str | None) -> None:
        """Delete one checkpoint, then its claim and its writes.

        The checkpoint goes first, so that a call stopped halfway leaves nothing
        readable behind (the index entry stays, and the next call finishes).
        """
        await self._threads.delete(thread, [checkpoint_key(ns, checkpoint_id)])
        if parent is not None:
            # The claim belongs to the child it names; a refused or forked put names another.
            key = claim_key(ns, parent)
            held = await self._threads.get(thread, key)
            if isinstance(held, dict) and held.get("id") == checkpoint_id:
                await self._threads.delete(thread, [key])
        writes = writes_prefix(ns, checkpoint_id)
        await self._threads.delete(
            thread, [r.checkpoint_id async for r in self._threads.walk(thread, writes)]
        )


def _entry(state: JsonValue) -> Entry | None:
    """The entry an index record holds; ``None`` for one the saver did not write."""
    if not isinstance(state, dict):
        return None
    run, thread, ns, id_, parent = (state.get(n) for n in ("run", "thread", "ns", "id", "parent"))
    if not (isinstance(run, str) and isinstance(thread, str) and isinstance(ns, str)):
        return None
    if not isinstance(id_, str) or not isinstance(parent, str | None):
        return None
    return Entry(run, thread, ns, id_, parent)
