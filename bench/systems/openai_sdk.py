"""The OpenAI Agents SDK's sessions: ``SQLiteSession``, ``RedisSession``, ``SQLAlchemySession``.

The SDK has one session object per conversation; a subject keeps one per
session id, all sharing one Redis client or SQLAlchemy engine (or, for
SQLite, one file). Rows are Responses-API input items. The SDK has no
expected-count check: ``expected`` is ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from agents import SQLiteSession
from agents.extensions.memory import RedisSession, SQLAlchemySession
from agents.memory import SessionABC
from psycopg import sql
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ..storage import Place, PostgresSchema, RedisKeys, SQLiteFile
from ..workload import Subject, Turn

__all__ = ["SDKRedisSubject", "SDKSQLAlchemySubject", "SDKSQLiteSubject", "turn_items"]


def turn_items(turn: Turn) -> list[Any]:
    """The turn as three Responses-API input items."""
    return [
        {"role": "user", "content": turn.user_text},
        {
            "type": "function_call",
            "call_id": turn.call_id,
            "name": turn.tool_name,
            "arguments": turn.arguments,
        },
        {"type": "function_call_output", "call_id": turn.call_id, "output": turn.tool_output},
    ]


class _SDKSubject(Subject):
    family = "openai-agents"
    place: Place

    def __init__(self) -> None:
        self.sessions: dict[str, SessionABC] = {}

    def session(self, session_id: str) -> SessionABC:
        """A new session object for ``session_id``."""
        raise NotImplementedError

    async def start(self, session_id: str) -> None:
        session = self.session(session_id)
        # The first call creates the tables where the SDK does it lazily.
        await session.get_items(limit=1)
        self.sessions[session_id] = session

    async def append(self, session_id: str, turn: Turn, expected: int) -> None:
        await self.sessions[session_id].add_items(turn_items(turn))

    async def read(self, session_id: str, last: int) -> int:
        return len(await self.sessions[session_id].get_items(limit=last))

    async def storage_bytes(self) -> int | None:
        return await self.place.size()


class SDKSQLiteSubject(_SDKSubject):
    """``SQLiteSession`` on a file: a thread hop per call, a process-wide lock per file."""

    server = "sqlite"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.name = "SDK SQLiteSession"
        self.place = SQLiteFile(path)
        self.path = path

    async def open(self) -> None:
        await self.place.remove()

    def session(self, session_id: str) -> SessionABC:
        return SQLiteSession(session_id, db_path=self.path)

    async def close(self) -> None:
        for session in self.sessions.values():
            if isinstance(session, SQLiteSession):
                session.close()
        self.sessions.clear()
        await self.place.remove()


class SDKRedisSubject(_SDKSubject):
    """``RedisSession``: WATCH, key-type checks, then MULTI/EXEC, on one shared client."""

    server = "redis"

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__()
        self.name = "SDK RedisSession"
        self.url = url
        self.prefix = prefix
        self.place = RedisKeys(url, prefix)
        self.client: Redis | None = None

    async def open(self) -> None:
        await self.place.remove()
        self.client = Redis.from_url(self.url)

    def session(self, session_id: str) -> SessionABC:
        assert self.client is not None
        return RedisSession(session_id, redis_client=self.client, key_prefix=self.prefix)

    async def close(self) -> None:
        self.sessions.clear()
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        await self.place.remove()


class SDKSQLAlchemySubject(_SDKSubject):
    """``SQLAlchemySession`` on Postgres through asyncpg, in a schema of its own."""

    server = "postgres"

    def __init__(self, url: str, schema: str) -> None:
        super().__init__()
        self.name = "SDK SQLAlchemySession"
        self.url = url
        self.schema = schema
        self.place = PostgresSchema(url, schema)
        self.engine: AsyncEngine | None = None

    async def open(self) -> None:
        await self.place.remove()
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.schema)))
        self.engine = create_async_engine(
            self.url.replace("postgresql://", "postgresql+asyncpg://", 1),
            connect_args={"server_settings": {"search_path": self.schema}},
        )

    def session(self, session_id: str) -> SessionABC:
        assert self.engine is not None
        return SQLAlchemySession(session_id, engine=self.engine, create_tables=True)

    async def close(self) -> None:
        self.sessions.clear()
        if self.engine is not None:
            await self.engine.dispose()
            self.engine = None
        await self.place.remove()
