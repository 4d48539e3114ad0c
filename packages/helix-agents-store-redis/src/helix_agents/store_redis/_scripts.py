"""The Lua scripts: composed from ``lua/``, loaded once, run by EVALSHA.

When a server answers NOSCRIPT (after ``SCRIPT FLUSH``, a restart or a
failover) the script is loaded again — on every primary of a cluster — and the
call re-sent once: the refused EVALSHA ran nothing, so no write is doubled.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import NoScriptError

from ._schema import check_script, lua_prelude
from ._wire import wire_for

__all__ = ["READS", "WRITES", "Scripts"]

WRITES = (
    "append",
    "approve",
    "checkpoint",
    "ckpt_delete",
    "ckpt_page",
    "clear",
    "commit",
    "create",
    "ctx_compact",
    "ctx_store",
    "delete",
    "finish",
    "pop",
    "record",
    "replace",
    "resolve",
    "truncate",
)
# Read scripts declare only the keys they read (see each script's first lines).
READS = (
    "r_clone",
    "r_hash",
    "r_index",
    "r_list",
    "r_output",
    "r_page",
    "r_queue",
    "r_search",
    "r_tail",
    "r_window",
)
INDEX = ("index_drop", "index_set")
# Scoped state's steps outside the commit (docs/scoped-state.md): each names its own keys.
SCOPED = ("scs_announce", "scs_apply", "scs_drop", "scs_settle")


def _lua(name: str) -> str:
    return files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


def source(name: str) -> str:
    """The full text of script ``name`` with the shared parts it needs.

    A write script gets the session's KEYS and its ARGV slots as named locals,
    generated from ``_schema.py``.
    """
    if name in READS:
        # Read-only scripts may run while writes are refused and never write.
        return "#!lua flags=no-writes\n" + _lua(name)
    if name in INDEX:
        return _lua("_index") + _lua(name)
    if name in SCOPED:
        return _lua(name)
    body = _lua(name)
    check_script(name, body)
    return _lua("_index") + lua_prelude(name) + _lua("_session") + body


class Scripts:
    """Every script, by name, for one client; call ``run(name, keys, args)``."""

    def __init__(self, client: Redis | RedisCluster) -> None:
        self._client = client
        self._sources = {name: source(name) for name in (*WRITES, *READS, *INDEX, *SCOPED)}
        self._shas: dict[str, Any] = {}
        self._wire = wire_for(client)
        self._heads: dict[str, bytes] = {}

    async def load(self) -> None:
        """Load every script now (on every primary of a cluster) so the first call is one trip."""
        for name in self._sources:
            await self._load(name)

    async def _load(self, name: str) -> None:
        # The server's digest of the bytes it got, whatever the client's encoding.
        sha = self._shas[name] = await self._client.script_load(self._sources[name])
        self._heads[name] = self._wire.head(str(sha)) if self._wire is not None else b""

    async def aclose(self) -> None:
        """Disconnect the connections the fast path keeps (the client's own stay as they are)."""
        if self._wire is not None:
            await self._wire.aclose()

    async def run(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA script ``name``; loads it and re-sends once if the server lost it."""
        try:
            return await self._send(name, keys, args)
        except NoScriptError:
            await self._load(name)
            return await self._send(name, keys, args)

    async def _send(self, name: str, keys: list[str], args: list[Any]) -> Any:
        if self._wire is not None:
            return await self._wire.call(self._wire.pack(self._heads[name], keys, args))
        return await self._client.execute_command(
            "EVALSHA", self._shas[name], len(keys), *keys, *args
        )
