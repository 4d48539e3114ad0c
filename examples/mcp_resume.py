"""An MCP client resumes a dropped stream with ``Last-Event-ID`` from a restarted server.

Run it with ``uv run python examples/mcp_resume.py [DB_PATH]``; it needs no network beyond
loopback. It starts a streamable-HTTP MCP server (uvicorn on 127.0.0.1) whose event store is
a HelixEventStore on a SQLite file, calls the ``count`` tool, and drops the connection after
the second tick. The server finishes the call and stores its events; the example then kills
the server (SIGKILL), starts a new one on the same file, and the client resumes the call with
the last event id it saw: the new server replays the ticks the client missed and the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import anyio
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import ClientMessageMetadata
from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    JSONRPCResponse,
    LoggingMessageNotificationParams,
    TextContent,
)

from helix_agents.core import open_store
from helix_agents.mcp import HelixEventStore

TICKS = 5
CALL = CallToolRequest(params=CallToolRequestParams(name="count", arguments={"n": TICKS}))


def build_server() -> MCPServer:
    """A server with one tool that logs a tick per step, pausing after the second."""
    mcp = MCPServer("counter")

    @mcp.tool()
    async def count(ctx: Context, n: int) -> str:
        """Count to ``n``, one log notification per step."""
        for i in range(1, n + 1):
            await ctx.info(f"tick {i}")
            if i == 2:
                await anyio.sleep(0.5)  # the client drops its connection meanwhile
        return f"counted to {n}"

    return mcp


async def serve(db: Path, port: int) -> None:
    """Serve MCP over streamable HTTP on ``127.0.0.1:port``, events kept in ``db``."""
    # Logging notifications are deprecated by the newest protocol revision; still sent.
    warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28")
    async with open_store(f"sqlite:///{db}") as store:
        app = build_server().streamable_http_app(event_store=HelixEventStore(store))
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        await uvicorn.Server(config).serve()


@contextlib.contextmanager
def server(db: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A server process, ready for requests; killed (SIGKILL) on exit."""
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(db), str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the MCP server did not start")
            time.sleep(0.05)
        yield process
    finally:
        process.kill()
        process.wait()


async def first_connection(url: str) -> str:
    """Call ``count``, drop the connection after the second tick; the last event id seen."""
    tokens: list[str] = []
    ticks: list[object] = []
    two_ticks, three_ids = anyio.Event(), anyio.Event()

    async def on_token(token: str) -> None:
        tokens.append(token)
        if len(tokens) == 3:  # the priming event's id, then each tick's
            three_ids.set()

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        ticks.append(params.data)
        print(params.data)
        if len(ticks) == 2:
            two_ticks.set()

    metadata = ClientMessageMetadata(on_resumption_token_update=on_token)
    async with (
        streamable_http_client(url, terminate_on_close=False) as (read, write),
        ClientSession(read, write, logging_callback=on_log) as session,
    ):
        await session.initialize()
        async with anyio.create_task_group() as calls:
            calls.start_soon(session.send_request, CALL, CallToolResult, None, metadata)
            with anyio.fail_after(10):
                await two_ticks.wait()
                await three_ids.wait()
            calls.cancel_scope.cancel()
    print("connection dropped")
    return tokens[-1]


async def wait_until_answered(db: Path, last_event_id: str) -> None:
    """Wait until the server has stored the call's result (so killing it loses nothing)."""
    found = asyncio.Event()

    async def look(event: object) -> None:
        if isinstance(getattr(event, "message", None), JSONRPCResponse):
            found.set()

    async with open_store(f"sqlite:///{db}") as store:
        events = HelixEventStore(store)
        with anyio.fail_after(10):
            while not found.is_set():
                await events.replay_events_after(last_event_id, look)
                await anyio.sleep(0.05)


async def resume(url: str, last_event_id: str) -> None:
    """A new MCP session resumes the call with ``Last-Event-ID``: the missed ticks, the result."""

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        print(f"resumed: {params.data}")

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, logging_callback=on_log) as session,
    ):
        await session.initialize()
        metadata = ClientMessageMetadata(resumption_token=last_event_id)
        with anyio.fail_after(10):
            result = await session.send_request(CALL, CallToolResult, metadata=metadata)
    text = result.content[0]
    print(f"result: {text.text if isinstance(text, TextContent) else text}")


def main(db: Path) -> None:
    """Drop a stream, restart the server, resume the stream."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with server(db, port):
        print("server 1 up")
        last_event_id = asyncio.run(first_connection(url))
        asyncio.run(wait_until_answered(db, last_event_id))
    print("server 1 killed")
    with server(db, port):
        print("server 2 up")
        asyncio.run(resume(url, last_event_id))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(Path(sys.argv[2]), int(sys.argv[3])))
    else:
        main(Path(sys.argv[1] if len(sys.argv) > 1 else "helix-mcp-resume.db"))
