"""Fixtures of the repository's own tests: throwaway places on the local servers, and a
scripted stand-in for the model the OpenAI Agents SDK examples call."""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from helix_agents.contract import backend_unavailable
from helix_agents.core import JsonObject

PG_URL = os.environ.get("HELIX_POSTGRES_URL") or "postgresql://127.0.0.1:5432/postgres"
REDIS_URL = os.environ.get("HELIX_REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def pg_database() -> Iterator[str]:
    """A fresh database on the local PostgreSQL server, dropped after the test."""
    name = f"helix_tmp_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        backend_unavailable(f"no PostgreSQL server at {PG_URL}: {exc}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlsplit(PG_URL)._replace(path=f"/{name}", query="").geturl()
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A store URL on the local Redis server under a fresh key prefix, its keys deleted after."""
    prefix = f"helix-tmp-{uuid.uuid4().hex[:12]}"
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=5)
    with client:
        try:
            client.ping()
        except redis.ConnectionError as exc:
            backend_unavailable(f"no Redis server at {REDIS_URL}: {exc}")
        yield f"{REDIS_URL.split('?', 1)[0]}?key_prefix={prefix}"
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)


@dataclass
class ScriptedModel:
    """A local stand-in for the OpenAI Responses API, and the requests it has answered.

    It answers every ``POST /v1/responses`` with one assistant message,
    ``"You said: <the last user text>"``; it serves no streaming and no tools.
    """

    base_url: str
    requests: list[JsonObject] = field(default_factory=list)

    def reply(self, request: JsonObject) -> JsonObject:
        """The Responses API answer to ``request`` (recorded)."""
        self.requests.append(request)
        n = len(self.requests)
        said = request.get("input")
        if isinstance(said, list):
            users = [i for i in said if isinstance(i, dict) and i.get("role") == "user"]
            said = users[-1].get("content") if users else None
        text: JsonObject = {"type": "output_text", "text": f"You said: {said}", "annotations": []}
        message: JsonObject = {
            "type": "message",
            "id": f"msg_{n}",
            "status": "completed",
            "role": "assistant",
            "content": [text],
        }
        usage: JsonObject = {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        return {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": request.get("model", "scripted"),
            "output": [message],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage,
        }


@pytest.fixture(scope="session")
def scripted_model() -> Iterator[ScriptedModel]:
    """A :class:`ScriptedModel` served on a free local port for the whole run."""
    model: ScriptedModel

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/responses" or body.get("stream"):
                self.send_error(501, f"the scripted model serves no {self.path} (stream or not)")
                return
            answer = json.dumps(model.reply(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test's failure output shows what matters

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    model = ScriptedModel(f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
