"""Scoped state on Redis and Redis Cluster (docs/scoped-state.md, "Redis").

A session's own map is a key of the session, written by the commit script. An app or
user map lives under its own hash tag, so the commit script cannot reach it; instead:

1. the store announces the session as a writer of each map it will change
   (``scs_announce``: a token, rising per map);
2. the commit script appends the maps' changes to the session's journal, with the rows;
3. :meth:`ScopedMixin._settle` applies the journal to each map once per entry
   (``scs_apply``, guarded by the session's mark in the map's slot), then drops the
   applied entries and seals the maps the journal no longer names (``scs_settle``), and
   forgets the sealed writer entries (``scs_drop``), retiring them: a retired writer's
   mark goes after :data:`MARK_RETENTION_MS`, so the marks stay as many as the writers
   of that last while, not of all time.

A crash between 2 and 3 leaves the session in the map's writers: every reader of the
map, and every later writer, settles each writer first, so no landed delta is lost (a
journal holding entries has no idle TTL: it outlives an expired session), and the marks
make a second application a no-op.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from helix_agents.core import JsonObject
from helix_agents.core.backend import check_scope
from helix_agents.core.models import Scope

from ._base import StoreBase
from ._codec import text
from ._errors import DRIVER_ERRORS, driver_error
from ._keys import map_siblings

__all__ = ["MARK_RETENTION_MS", "ScopedMixin", "SharedChanges", "flat_pairs", "journal_entry"]

MARK_RETENTION_MS = 86_400_000
"""How long a settled writer's applied mark outlives it (a day): a reader that read a
journal entry and applies it later than this could apply it twice."""

SharedChanges = dict[str, list[str]]
"""Map key -> flat key / JSON pairs, for the app and user maps a commit changes."""


class ScopedMixin(StoreBase):
    """``get_scoped_state`` and the steps around a commit that changes app or user maps."""

    _mark_retention_ms = MARK_RETENTION_MS

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        client, _ = self._live()
        check_scope(None, scope, owner)
        if scope == "session":
            await self._require(owner)
            key = self.options.keys.session(owner, ("scs",))[0]
        else:
            key, writers, _, _, _ = self.options.keys.scoped(scope, owner)
            try:
                pending = text(await client.hgetall(writers))
            except DRIVER_ERRORS as exc:
                raise driver_error(exc, None, write=False) from exc
            for session_id, token in pending.items():
                await self._settle(session_id, {key: token})
        try:
            found = text(await client.hgetall(key))
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, None, write=False) from exc
        return {name: json.loads(value) for name, value in found.items()}

    def _shared_changes(self, merged: Mapping[tuple[str, str], Mapping[str, Any]]) -> SharedChanges:
        return {
            self.options.keys.scoped(scope, owner)[0]: flat_pairs(changes)
            for (scope, owner), changes in merged.items()
            if scope != "session"
        }

    async def _announce(self, session_id: str, maps: SharedChanges) -> dict[str, str]:
        """Step 1: the session as a writer of each map; the tokens, by map key."""
        tokens = {}
        for key in maps:
            writers, counter, _, retired = map_siblings(key)
            tokens[key] = str(
                await self._step(
                    "scs_announce", [writers, counter, retired], [session_id], session_id
                )
            )
        return tokens

    async def _settle(self, session_id: str, tokens: Mapping[str, str]) -> None:
        """Steps 3 to 5: apply the session's journal, drop it, seal and forget ``tokens``."""
        client, _ = self._live()
        journal_key, pending, seals = self.options.keys.session(
            session_id, ("scsj", "scsp", "scss")
        )
        try:
            journal = text(await client.hgetall(journal_key))
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=False) from exc
        applied = sorted(journal, key=int)
        for seq in applied:
            for key, pairs in json.loads(journal[seq]):
                marks = map_siblings(key)[2]
                await self._step("scs_apply", [key, marks], [session_id, seq, *pairs], session_id)
        meta = self.options.keys.meta(session_id)
        sealed = await self._step(
            "scs_settle",
            [meta, journal_key, pending, seals],
            [len(applied), *applied, *(v for pair in tokens.items() for v in pair)],
            session_id,
        )
        for key in text(sealed):
            writers, _, marks, retired = map_siblings(key)
            args = [session_id, tokens[key], self._mark_retention_ms]
            await self._step("scs_drop", [writers, marks, retired], args, session_id)

    async def _step(self, name: str, keys: list[str], args: list[Any], session_id: str) -> Any:
        _, scripts = self._live()
        try:
            return await scripts.run(name, keys, args)
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=True) from exc


def flat_pairs(changes: Mapping[str, Any]) -> list[str]:
    """Key / JSON text pairs, flat, as HSET takes them."""
    return [
        part
        for key, value in changes.items()
        for part in (key, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    ]


def journal_entry(maps: SharedChanges) -> str:
    """The journal entry of a commit's app and user changes ('' when there are none)."""
    return json.dumps([[key, pairs] for key, pairs in maps.items()]) if maps else ""
