"""Export reads (docs/export.md, EXP-2, EXP-3): a session's every record by one script
(lua/dump.lua, in the session's slot), and every app and user map of scoped state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from redis.asyncio import Redis, RedisCluster

from helix_agents.core import CommitResult, LateAnswer, StoredContextItem
from helix_agents.core.backend import DUMP_WANT, SessionDump
from helix_agents.core.context import OutputRef

from ._codec import snapshot_of, text
from ._keys import KeySpace

__all__ = ["map_owners", "session_dump"]

_UNTAG = (("%7B", "{"), ("%7D", "}"), ("%25", "%"))


def _pairs(flat: Sequence[str]) -> list[tuple[str, str]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def session_dump(session_id: str, reply: list[Any]) -> SessionDump:
    """The :class:`SessionDump` of lua/dump.lua's reply (decoded)."""
    encoded, runs, queued, delivered, resolved, commits, outputs, compactions = reply
    at = {entry: int(float(index)) for entry, index in _pairs(delivered)}
    stored = dict(_pairs(queued))
    out = dict(_pairs(outputs))
    return SessionDump(
        snapshot=snapshot_of(session_id, encoded, DUMP_WANT),
        run_ids=list(runs),
        context_items=[
            (StoredContextItem.model_validate_json(body), at.get(entry))
            for entry, body in stored.items()
            if entry.startswith("c:")
        ],
        late_answers=[
            (LateAnswer.model_validate_json(body), at.get(entry))
            for entry, body in stored.items()
            if entry.startswith("l:")
        ],
        resolved=list(resolved),
        commits=[
            (cid, CommitResult.model_validate_json(result)) for cid, result in _pairs(commits)
        ],
        outputs=[
            (OutputRef.model_validate_json(ref), out["t:" + name[2:]])
            for name, ref in out.items()
            if name.startswith("r:")
        ],
        compactions=[
            (int(boundary), summary)
            for boundary, _, summary in (entry.partition(" ") for entry in compactions)
        ],
    )


async def map_owners(
    client: Redis | RedisCluster, keys: KeySpace
) -> AsyncIterator[tuple[str, str]]:
    """The ``(scope, owner)`` of every app and user map (SCAN over every primary)."""
    pattern = keys.pattern.removesuffix("*") + "scs:{*}:map"
    head = keys.base + "scs:{"
    found: AsyncIterator[Any]
    if isinstance(client, RedisCluster):
        found = client.scan_iter(match=pattern, target_nodes=RedisCluster.PRIMARIES)
    else:
        found = client.scan_iter(match=pattern)
    seen: set[str] = set()
    async for raw in found:
        key = text(raw)
        if key in seen or not key.startswith(head) or not key.endswith("}:map"):
            continue
        seen.add(key)
        tag = key[len(head) : -len("}:map")]
        for escaped, plain in _UNTAG:
            tag = tag.replace(escaped, plain)
        scope, _, owner = tag.partition(":")
        if scope in ("app", "user"):
            yield scope, owner
