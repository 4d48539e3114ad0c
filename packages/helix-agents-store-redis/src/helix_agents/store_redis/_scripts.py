"""The Lua scripts: composed from ``lua/``, registered once, run by EVALSHA.

redis-py's script objects reload a script transparently when the server
answers NOSCRIPT (after ``SCRIPT FLUSH`` or a restart); on a cluster the reload
goes to every primary.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from redis.asyncio import Redis, RedisCluster

__all__ = ["READS", "WRITES", "Scripts"]

WRITES = (
    "approve",
    "checkpoint",
    "clear",
    "commit",
    "create",
    "delete",
    "finish",
    "record",
    "resolve",
    "truncate",
)
READS = ("r_clone", "r_hash", "r_page", "r_queue", "r_tail")
INDEX = ("index_drop", "index_set")


def _lua(name: str) -> str:
    return files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


def source(name: str) -> str:
    """The full text of script ``name`` with the shared parts it needs."""
    if name in READS:
        # Read-only scripts may run while writes are refused and never write.
        return "#!lua flags=no-writes\n" + _lua("_keys") + _lua(name)
    if name in INDEX:
        return _lua("_index") + _lua(name)
    return _lua("_index") + _lua("_keys") + _lua("_session") + _lua(name)


class Scripts:
    """Every script registered on one client; call ``run(name, keys, args)``."""

    def __init__(self, client: Redis | RedisCluster) -> None:
        self._client = client
        self._scripts = {
            name: client.register_script(source(name)) for name in (*WRITES, *READS, *INDEX)
        }

    async def load(self) -> None:
        """Load every script now (on every primary of a cluster) so the first call is one trip."""
        for script in self._scripts.values():
            await self._client.script_load(script.script)

    async def run(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA script ``name``; reloads it once if the server lost it."""
        return await self._scripts[name](keys=keys, args=args)
