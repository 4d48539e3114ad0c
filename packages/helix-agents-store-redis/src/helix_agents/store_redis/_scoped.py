"""Scoped state's app and user maps on Redis and Redis Cluster (docs/scoped-state.md, "Redis").

A session's own map is a key of the session, written by lua/apply.lua. An app or user
map lives under its own hash tag, so the applier cannot reach it; instead:

1. :meth:`Journal.announce` registers the session as a writer of each map it will change
   (``scs_announce``: a token, rising per map);
2. the applier appends the maps' changes to the session's journal, with the rest of the
   write (refusing it, ``sealed``, if a reader sealed a map since the announce);
3. :meth:`Journal.settle` applies the journal to each map once per entry (``scs_apply``,
   guarded by the session's mark in the map's slot), then drops the applied entries and
   seals the maps the journal no longer names (``scs_settle``), and forgets the sealed
   writer entries (``scs_drop``), retiring them: a retired writer's mark goes after
   :data:`MARK_RETENTION_MS`.

A crash between 2 and 3 leaves the session among the map's writers: every reader of the
map settles each writer first, so no landed delta is lost, and the marks make a second
application a no-op.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from helix_agents.core import JsonObject

from ._codec import text
from ._keys import KeySpace, map_siblings

__all__ = ["MARK_RETENTION_MS", "Journal", "journal_entry"]

MARK_RETENTION_MS = 86_400_000
"""How long a settled writer's applied mark outlives it (a day): a reader that read a
journal entry and applies it later than this could apply it twice."""

Run = Callable[[str, Sequence[str], Sequence[Any], str | None], Awaitable[Any]]
"""Runs a script: name, keys, args, the session it is about (for errors)."""
Read = Callable[[str], Awaitable[dict[str, str]]]
"""HGETALL, decoded."""


class Journal:
    """The steps around a write that changes app or user maps, and a map's read."""

    def __init__(self, keys: KeySpace, run: Run, hgetall: Read) -> None:
        self.keys = keys
        self._run = run
        self._hgetall = hgetall
        self.mark_retention_ms = MARK_RETENTION_MS

    def shared(self, scoped: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, list[str]]:
        """Map key -> flat key / JSON pairs, for the app and user maps of ``scoped``."""
        return {
            self.keys.scoped(scope, owner)[0]: [
                part
                for key, value in values.items()
                for part in (key, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
            ]
            for (scope, owner), values in scoped.items()
            if scope != "session"
        }

    async def announce(self, session_id: str, maps: Mapping[str, Any]) -> dict[str, str]:
        """Step 1: the session as a writer of each map; the tokens, by map key."""
        tokens = {}
        for key in maps:
            writers, counter, _, retired = map_siblings(key)
            keys = [writers, counter, retired]
            token = await self._run("scs_announce", keys, [session_id], session_id)
            tokens[key] = str(text(token))
        return tokens

    async def settle(self, session_id: str, tokens: Mapping[str, str]) -> None:
        """Steps 3 to 5: apply the session's journal, drop it, seal and forget ``tokens``."""
        journal_key, pending, seals = self.keys.session(session_id, ("scsj", "scsp", "scss"))
        journal = await self._hgetall(journal_key)
        applied = sorted(journal, key=int)
        for seq in applied:
            for key, pairs in json.loads(journal[seq]):
                marks = map_siblings(key)[2]
                await self._run("scs_apply", [key, marks], [session_id, seq, *pairs], session_id)
        meta = self.keys.meta(session_id)
        sealed = await self._run(
            "scs_settle",
            [meta, journal_key, pending, seals],
            [len(applied), *applied, *(v for pair in tokens.items() for v in pair)],
            session_id,
        )
        for key in text(sealed):
            writers, _, marks, retired = map_siblings(key)
            args = [session_id, tokens[key], self.mark_retention_ms]
            await self._run("scs_drop", [writers, marks, retired], args, session_id)

    async def read(self, scope: str, owner: str) -> JsonObject:
        """An app or user map, after settling every writer still registered."""
        key, writers, _, _, _ = self.keys.scoped(scope, owner)
        for session_id, token in (await self._hgetall(writers)).items():
            await self.settle(session_id, {key: token})
        return {name: json.loads(value) for name, value in (await self._hgetall(key)).items()}


def journal_entry(maps: Mapping[str, list[str]]) -> str:
    """The journal entry of a write's app and user changes ('' when there are none)."""
    return json.dumps([[key, pairs] for key, pairs in maps.items()]) if maps else ""
