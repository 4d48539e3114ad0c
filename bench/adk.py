"""Google ADK sessions: ``HelixSessionService`` beside ADK's ``DatabaseSessionService``.

On SQLite and on Postgres, each service gets one session that grows to ``adk_events``
events (each with a small state delta in all three scopes), every ``append_event``
timed; then ``get_session`` (every event) and ``get_session(num_recent_events=20)`` are
timed ``adk_ops`` times each, the two services interleaved so noise hits both alike.
ADK's service runs on its SQLAlchemy drivers (aiosqlite, asyncpg), in a schema of its own.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import psycopg
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import BaseSessionService, DatabaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from psycopg import sql

from helix_agents.adk import HelixSessionService

from .config import Servers, Settings
from .stats import Latencies
from .storage import drop_schema
from .systems import NAMESPACE, helix_subject

__all__ = ["measure_adk"]

log = logging.getLogger("bench.adk")

APP, USER, SESSION = "bench", "user-1", "session-1"
_OPS = ("append_event", "get_session (all)", "get_session (last 20)")


def _event(step: int) -> Event:
    text = f"turn {step}: " + "lorem ipsum " * 8
    return Event(
        invocation_id=f"inv-{step // 4}",
        author="user" if step % 2 == 0 else "agent",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(
            state_delta={"step": step, "user:last": step, "app:turns": step, "temp:x": 1}
        ),
    )


async def _adk_postgres(url: str, schema: str) -> DatabaseSessionService:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    driver = url.replace("postgresql://", "postgresql+asyncpg://", 1)
    return DatabaseSessionService(driver, connect_args={"server_settings": {"search_path": schema}})


async def _run(services: dict[str, BaseSessionService], settings: Settings) -> dict[str, Any]:
    sessions = {
        name: await svc.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        for name, svc in services.items()
    }
    lat = {name: {op: Latencies() for op in _OPS} for name in services}
    clock = time.perf_counter
    for step in range(settings.adk_events):
        for name, svc in services.items():
            event = _event(step)
            t0 = clock()
            await svc.append_event(sessions[name], event)
            lat[name]["append_event"].add(clock() - t0)
    recent = GetSessionConfig(num_recent_events=20)
    for _ in range(settings.adk_ops):
        for name, svc in services.items():
            for op, config in (("get_session (all)", None), ("get_session (last 20)", recent)):
                t0 = clock()
                got = await svc.get_session(
                    app_name=APP, user_id=USER, session_id=SESSION, config=config
                )
                lat[name][op].add(clock() - t0)
                want = settings.adk_events if config is None else 20
                last = settings.adk_events - 1
                if got is None or len(got.events) != want or got.state.get("user:last") != last:
                    seen = None if got is None else (len(got.events), got.state)
                    raise AssertionError(f"{name}: wrong read of the session: {seen}")
    return {name: {op: s.summary() for op, s in by_op.items()} for name, by_op in lat.items()}


async def measure_adk(settings: Settings, servers: Servers, workdir: Path) -> dict[str, Any]:
    """Per server (sqlite, postgres): each service's p50/p99 of the three operations."""
    out: dict[str, Any] = {}
    for server in ("sqlite", "postgres"):
        subject = helix_subject(server, servers, workdir, "_adk")
        await subject.open()
        schema = f"{NAMESPACE}_adk_theirs"
        if server == "sqlite":
            theirs = DatabaseSessionService(f"sqlite+aiosqlite:///{workdir / 'adk_theirs.db'}")
        else:
            theirs = await _adk_postgres(servers.postgres, schema)
        try:
            log.info("adk: %s", server)
            services = {"helix": HelixSessionService(subject.store), "adk database": theirs}
            out[server] = await _run(services, settings)
        finally:
            await theirs.close()
            await subject.close()
            if server == "postgres":
                await drop_schema(servers.postgres, schema)
    return out
