"""The conditions of a run: machine, load, server settings and library versions."""

from __future__ import annotations

import os
import platform
import sqlite3
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import psutil
import psycopg
from redis.asyncio import Redis

from .config import Servers

__all__ = ["busy_processes", "conditions"]

_PACKAGES = (
    "openai-agents",
    "langgraph",
    "langgraph-checkpoint-postgres",
    "langgraph-checkpoint-sqlite",
    "sqlalchemy",
    "asyncpg",
    "psycopg",
    "redis",
    "aiosqlite",
)


def busy_processes(word: str = "pytest") -> int:
    """How many other processes have ``word`` in their command line."""
    count = 0
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info.get("cmdline") or [])
        if word in cmd and proc.info["pid"] != os.getpid():
            count += 1
    return count


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


async def _postgres(url: str) -> str:
    try:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            cur = await conn.execute(
                "SELECT current_setting('server_version'), current_setting('synchronous_commit'),"
                " current_setting('fsync'), current_setting('shared_buffers')"
            )
            row = await cur.fetchone()
    except psycopg.Error as exc:
        return f"unavailable ({exc})"
    assert row is not None
    return f"{row[0]} (synchronous_commit={row[1]}, fsync={row[2]}, shared_buffers={row[3]})"


async def _redis(url: str) -> str:
    try:
        async with Redis.from_url(url) as client:
            info = await client.info("server")
            aof = await client.config_get("appendonly")
            save = await client.config_get("save")
    except Exception as exc:
        return f"unavailable ({exc})"
    return (
        f"{info['redis_version']} (appendonly={aof.get('appendonly')}, save={save.get('save')!r})"
    )


async def conditions(servers: Servers, when: str) -> dict[str, Any]:
    """A snapshot of the machine now; ``when`` labels it (``start`` / ``end``)."""
    load = os.getloadavg()
    out: dict[str, Any] = {
        f"load average at {when} (1/5/15 min)": ", ".join(f"{x:.2f}" for x in load),
        f"other pytest processes at {when}": busy_processes(),
    }
    if when == "start":
        out = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {psutil.cpu_count()} cores, "
            f"{psutil.virtual_memory().total / 2**30:.0f} GiB, {platform.platform()}",
            "python": platform.python_version(),
            "postgres": await _postgres(servers.postgres),
            "redis": await _redis(servers.redis),
            "sqlite": sqlite3.sqlite_version,
            "libraries": ", ".join(f"{p} {_version(p)}" for p in _PACKAGES),
            **out,
        }
    return out
