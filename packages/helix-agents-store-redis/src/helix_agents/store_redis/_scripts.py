"""The Lua scripts: composed from ``lua/``, loaded once, run by ``EVALSHA``.

``apply`` is the one writer, ``read`` the snapshot reader; the ``scs_*`` steps of
scoped state's journal each run in an app or user map's slot or the session's
(docs/scoped-state.md). When a server answers NOSCRIPT (after ``SCRIPT FLUSH``, a
restart or a failover) the script is loaded again — on every primary of a cluster —
and the call re-sent once: the refused EVALSHA ran nothing, so no write is doubled.
With ``wait_replicas``, a write is sent with a ``WAIT`` behind it in one pipeline:
``WAIT`` counts the replicas that have every write of its own connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import NoScriptError

from ._keys import SESSION_KEYS
from ._wait import NotReplicatedError, ReplicaWait

__all__ = ["NAMES", "Scripts", "source"]

NAMES = ("apply", "dump", "read", "scs_announce", "scs_apply", "scs_drop", "scs_settle")


def _lua(name: str) -> str:
    return files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


def _prelude() -> str:
    """The session's KEYS by name (``local META, ROWS, ... = KEYS[1], KEYS[2], ...``)."""
    names = ", ".join(name.upper() for name in SESSION_KEYS)
    keys = ", ".join(f"KEYS[{i}]" for i in range(1, len(SESSION_KEYS) + 1))
    return f"local {names} = {keys}\nlocal NKEYS = {len(SESSION_KEYS)}\n"


def source(name: str) -> str:
    """The full text of script ``name``, with the shared parts it needs."""
    if name in ("read", "dump"):  # may run where writes are refused, and never write
        return "#!lua flags=no-writes\n" + _prelude() + _lua("_snapshot") + _lua(name)
    if name == "apply":
        return _prelude() + _lua("_snapshot") + _lua("apply")
    return _lua(name)


class Scripts:
    """Every script, by name, for one client: ``await scripts.run(name, keys, args)``."""

    __slots__ = ("_client", "_shas", "_sources", "_wait")

    def __init__(self, client: Redis | RedisCluster, wait: ReplicaWait | None = None) -> None:
        self._client = client
        self._wait = wait
        self._sources = {name: source(name) for name in NAMES}
        self._shas: dict[str, str] = {}

    async def load(self) -> None:
        """Load every script now (on every primary of a cluster): the first call is one trip."""
        for name in self._sources:
            await self._load(name)

    async def _load(self, name: str) -> None:
        sha = await self._client.script_load(self._sources[name])
        self._shas[name] = sha.decode() if isinstance(sha, bytes) else str(sha)

    async def run(self, name: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """EVALSHA script ``name``; loads it and re-sends once if the server lost it.

        With a replica wait, a write that too few replicas acknowledged raises
        :class:`NotReplicatedError` after it ran.
        """
        if self._wait is not None and name != "read" and isinstance(self._client, Redis):
            return await self._run_waiting(self._client, self._wait, name, keys, args)
        try:
            return await self._client.evalsha(self._shas[name], len(keys), *keys, *args)
        except NoScriptError:
            await self._load(name)
            return await self._client.evalsha(self._shas[name], len(keys), *keys, *args)

    async def _run_waiting(
        self, client: Redis, wait: ReplicaWait, name: str, keys: Sequence[str], args: Sequence[Any]
    ) -> Any:
        reply, acked = await self._send_waiting(client, wait, name, keys, args)
        if isinstance(reply, NoScriptError):
            await self._load(name)
            reply, acked = await self._send_waiting(client, wait, name, keys, args)
        for answer in (reply, acked):
            if isinstance(answer, Exception):
                raise answer
        if int(acked) < wait.replicas:
            raise NotReplicatedError(int(acked))
        return reply

    async def _send_waiting(
        self, client: Redis, wait: ReplicaWait, name: str, keys: Sequence[str], args: Sequence[Any]
    ) -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            pipe.evalsha(self._shas[name], len(keys), *keys, *args)
            pipe.execute_command("WAIT", wait.replicas, wait.timeout_ms)
            return list(await pipe.execute(raise_on_error=False))
