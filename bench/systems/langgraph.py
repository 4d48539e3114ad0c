"""LangGraph's checkpointers, driven the way a message-state graph stores a conversation.

The graph is ``StateGraph(MessagesState)``: the ``messages`` channel holds the
whole list, and ``add_messages`` merges a turn's rows into it. A turn is one
``aupdate_state`` (read the latest checkpoint, merge, write a new checkpoint
with the whole list: the cheapest way a graph records a turn; ``ainvoke``
writes one checkpoint per step) and a read is ``aget_state``. The checkpointer
has no expected-count check: ``expected`` is ignored.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from psycopg import sql
from psycopg.rows import dict_row

from ..storage import Place, PostgresSchema, SQLiteFile
from ..workload import Subject, Turn

__all__ = ["GraphSubject", "LangGraphPostgresSubject", "LangGraphSQLiteSubject", "turn_messages"]


def turn_messages(turn: Turn) -> list[BaseMessage]:
    """The turn as three LangChain messages."""
    call = {"id": turn.call_id, "name": turn.tool_name, "args": {"raw": turn.arguments}}
    return [
        HumanMessage(content=turn.user_text),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage(content=turn.tool_output, tool_call_id=turn.call_id),
    ]


def _no_op(state: MessagesState) -> dict[str, Any]:
    return {}


class GraphSubject(Subject):
    """A message-state graph compiled with a checkpointer; ``saver`` is that checkpointer."""

    family = "langgraph"
    place: Place

    def __init__(self) -> None:
        self._stack = AsyncExitStack()
        self.graph: Any = None
        self.saver: BaseCheckpointSaver[Any] | None = None

    def _compile(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        builder = StateGraph(MessagesState)
        builder.add_node("agent", _no_op)
        builder.add_edge(START, "agent")
        self.graph = builder.compile(checkpointer=saver)

    @staticmethod
    def _config(session_id: str) -> Any:
        return {"configurable": {"thread_id": session_id}}

    async def start(self, session_id: str) -> None:
        # A thread exists once it has a checkpoint; the first turn writes it.
        return None

    async def append(self, session_id: str, turn: Turn, expected: int) -> None:
        update = {"messages": turn_messages(turn)}
        await self.graph.aupdate_state(self._config(session_id), update, as_node="agent")

    async def read(self, session_id: str, last: int) -> int:
        state = await self.graph.aget_state(self._config(session_id))
        return len(state.values.get("messages", [])[-last:])

    async def storage_bytes(self) -> int | None:
        return await self.place.size()

    async def close(self) -> None:
        await self._stack.aclose()
        self.graph = None
        await self.place.remove()


class LangGraphPostgresSubject(GraphSubject):
    """``AsyncPostgresSaver`` on one psycopg connection, in a schema of its own."""

    server = "postgres"

    def __init__(self, url: str, schema: str) -> None:
        super().__init__()
        self.name = "LangGraph AsyncPostgresSaver"
        self.url = url
        self.schema = schema
        self.place = PostgresSchema(url, schema)

    async def open(self) -> None:
        await self.place.remove()
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as admin:
            await admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.schema)))
        # The settings of AsyncPostgresSaver.from_conn_string, plus the schema.
        conn = await psycopg.AsyncConnection.connect(
            self.url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            options=f"-c search_path={self.schema}",
        )
        await self._stack.enter_async_context(conn)
        saver = AsyncPostgresSaver(conn)
        await saver.setup()
        self._compile(saver)


class LangGraphSQLiteSubject(GraphSubject):
    """``AsyncSqliteSaver`` on one aiosqlite connection to a file."""

    server = "sqlite"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.name = "LangGraph AsyncSqliteSaver"
        self.path = path
        self.place = SQLiteFile(path)

    async def open(self) -> None:
        await self.place.remove()
        conn = await self._stack.enter_async_context(aiosqlite.connect(self.path))
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        self._compile(saver)
