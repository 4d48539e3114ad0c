"""The event stream of a served process sends a change when another process commits
(docs/inspector.md, INS-7)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from helix_agents.core import ChatMessage, MessageCommit, open_store

from .serve_client import make_demo
from .serve_process import served

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("backend", ["sqlite_url", "pg_url"])
async def test_INS_7_the_stream_sends_a_change_after_another_process_commits(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url: str = request.getfixturevalue(backend)
    await make_demo(url)
    with served(url, tmp_path) as server:
        async with (
            httpx.AsyncClient(base_url=server.base, timeout=15) as client,
            client.stream("GET", "/session/events", params={"id": "demo-trip"}) as stream,
        ):
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.aiter_lines()
            assert await anext(lines) == "retry: 2000"
            # idle: no change yet, only the keep-alive comment
            while (line := await anext(lines)) != ": idle":
                assert not line.startswith("event:"), line
            # this process writes, through its own connection
            async with open_store(url) as store:
                await store.append_messages(
                    "demo-trip",
                    MessageCommit(messages=(ChatMessage(role="user", content="And back?"),)),
                )
            committed = time.monotonic()
            while (line := await anext(lines)) != "event: change":
                assert line in ("", ": idle"), line
            assert await anext(lines) == 'data: {"rows": 9}'
            assert time.monotonic() - committed < 5  # polled once a second
