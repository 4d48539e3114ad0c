"""Where each system's data lives: its size, and removing it between runs."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import psycopg
from psycopg import sql
from redis.asyncio import Redis

__all__ = [
    "Place",
    "PostgresSchema",
    "RedisKeys",
    "SQLiteFile",
    "delete_keys",
    "drop_schema",
    "postgres_schema_bytes",
    "redis_keys_bytes",
    "remove_sqlite",
    "sqlite_bytes",
]


async def drop_schema(url: str, schema: str) -> None:
    """Drop ``schema`` and everything in it, if it exists."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


async def postgres_schema_bytes(url: str, schema: str) -> int:
    """Heap, TOAST and index bytes of every table in ``schema``."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def _scan(client: Redis, pattern: str) -> list[bytes]:
    return [key async for key in client.scan_iter(match=pattern, count=1000)]


async def redis_keys_bytes(url: str, pattern: str) -> int:
    """``MEMORY USAGE`` (every element sampled) summed over the keys matching ``pattern``."""
    async with Redis.from_url(url) as client:
        total = 0
        for key in await _scan(client, pattern):
            used = await client.memory_usage(key, samples=0)
            total += int(used or 0)
        return total


async def delete_keys(url: str, pattern: str) -> None:
    """Delete the keys matching ``pattern``."""
    async with Redis.from_url(url) as client:
        keys = await _scan(client, pattern)
        for start in range(0, len(keys), 500):
            await client.unlink(*keys[start : start + 500])


def _sqlite_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _checkpoint(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


async def sqlite_bytes(path: Path) -> int:
    """The database file's size once its WAL is checkpointed into it."""
    await asyncio.to_thread(_checkpoint, path)
    return sum(p.stat().st_size for p in _sqlite_files(path) if p.exists())


def remove_sqlite(path: Path) -> None:
    """Delete the database file and its WAL and shared-memory files."""
    for p in _sqlite_files(path):
        p.unlink(missing_ok=True)


class Place:
    """Where one subject keeps its data; the base keeps nothing measurable (in-process)."""

    async def size(self) -> int | None:
        """Bytes used now, or ``None``."""
        return None

    async def remove(self) -> None:
        """Delete the data."""

    async def settle(self) -> None:
        """Do what the server's background maintenance would do after a bulk load."""


class PostgresSchema(Place):
    """A schema of its own on the Postgres server."""

    def __init__(self, url: str, schema: str) -> None:
        self.url = url
        self.schema = schema

    async def size(self) -> int | None:
        return await postgres_schema_bytes(self.url, self.schema)

    async def remove(self) -> None:
        await drop_schema(self.url, self.schema)

    async def settle(self) -> None:
        """``ANALYZE`` the schema's tables, as autovacuum does within a minute of a bulk load.

        Without it the planner still believes the tables are as small as at
        creation, and reads the whole of a big user's index before sorting.
        """
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            cur = await conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r'",
                (self.schema,),
            )
            for (table,) in await cur.fetchall():
                await conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(self.schema, table)))


class RedisKeys(Place):
    """The keys under one prefix on the Redis server."""

    def __init__(self, url: str, prefix: str) -> None:
        self.url = url
        self.pattern = prefix + "*"

    async def size(self) -> int | None:
        return await redis_keys_bytes(self.url, self.pattern)

    async def remove(self) -> None:
        await delete_keys(self.url, self.pattern)


class SQLiteFile(Place):
    """A database file of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def size(self) -> int | None:
        return await sqlite_bytes(self.path)

    async def remove(self) -> None:
        remove_sqlite(self.path)
