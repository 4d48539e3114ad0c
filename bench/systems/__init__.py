"""The systems under test: our stores and the alternatives, each behind :class:`Subject`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Servers
from ..storage import Place, PostgresSchema, RedisKeys, SQLiteFile
from ..workload import Subject
from .helix_langgraph import HelixSaverSubject
from .helix_session import HelixSessionSubject
from .langgraph import GraphSubject, LangGraphPostgresSubject, LangGraphSQLiteSubject
from .openai_sdk import SDKRedisSubject, SDKSQLAlchemySubject, SDKSQLiteSubject
from .ours import HelixSubject

__all__ = ["NAMESPACE", "all_subjects", "graph_subjects", "helix_subject", "session_pairs"]

NAMESPACE = "helixbench"
"""Every schema, key prefix and file of a run starts with this; a run first removes leftovers."""


def helix_subject(
    server: str, servers: Servers, workdir: Path, tag: str = "", **options: Any
) -> HelixSubject:
    """Our store on ``server``, its data under a name of its own (``tag`` tells two apart).

    ``options`` go to the store (``max_size=16`` for the Postgres pool, …).
    """
    space = f"{NAMESPACE}{tag}"
    name = f"helix {server}"
    if server == "memory":
        return HelixSubject(name, server, "memory://", Place(), **options)
    if server == "sqlite":
        path = workdir / f"{space}.db"
        return HelixSubject(name, server, f"sqlite:///{path}", SQLiteFile(path), **options)
    if server == "postgres":
        schema = PostgresSchema(servers.postgres, space)
        return HelixSubject(
            name, server, servers.postgres, schema, namespace=space, auto_migrate=True, **options
        )
    if server == "redis":
        keys = RedisKeys(servers.redis, f"helix:{space}:")
        return HelixSubject(name, server, servers.redis, keys, namespace=space, **options)
    raise ValueError(f"unknown server {server!r}")


def graph_subjects(servers: Servers, workdir: Path, tag: str = "") -> list[GraphSubject]:
    """The same graph on our saver over SQLite, Postgres and Redis, then LangGraph's two savers."""
    ours = [
        HelixSaverSubject(helix_subject(s, servers, workdir, f"_lg{tag}"))
        for s in ("sqlite", "postgres", "redis")
    ]
    return [
        *ours,
        LangGraphPostgresSubject(servers.postgres, f"{NAMESPACE}_langgraph{tag}"),
        LangGraphSQLiteSubject(workdir / f"{NAMESPACE}_langgraph{tag}.db"),
    ]


def all_subjects(servers: Servers, workdir: Path) -> list[Subject]:
    """Our four stores (SQLite twice: its default, and ``synchronous=FULL``), HelixSession on
    three of them, the three SDK sessions, then the graph on our saver and on LangGraph's
    two savers."""
    ours: list[Subject] = [
        helix_subject(s, servers, workdir) for s in ("memory", "sqlite", "postgres", "redis")
    ]
    # SQLiteSession runs with SQLite's default synchronous=FULL: the like-for-like durability.
    full = helix_subject("sqlite", servers, workdir, "_full", synchronous="FULL")
    full.name = "helix sqlite (FULL)"
    return [
        *ours,
        full,
        *(helix_session(s, servers, workdir) for s in ("sqlite", "postgres", "redis")),
        SDKSQLiteSubject(workdir / f"{NAMESPACE}_sdk.db"),
        SDKRedisSubject(servers.redis, f"{NAMESPACE}_sdk"),
        SDKSQLAlchemySubject(servers.postgres, f"{NAMESPACE}_sdk"),
        *graph_subjects(servers, workdir),
    ]


def helix_session(server: str, servers: Servers, workdir: Path) -> HelixSessionSubject:
    """HelixSession on our store on ``server``, its data apart from the plain store's."""
    return HelixSessionSubject(helix_subject(server, servers, workdir, "_session"))


SessionSubject = HelixSessionSubject | SDKSQLiteSubject | SDKRedisSubject | SDKSQLAlchemySubject


def session_pairs(servers: Servers, workdir: Path) -> list[SessionSubject]:
    """The SDK's session on each server, each followed by HelixSession on our store there."""
    return [
        SDKSQLiteSubject(workdir / f"{NAMESPACE}_runner_sdk.db"),
        HelixSessionSubject(helix_subject("sqlite", servers, workdir, "_runner")),
        SDKRedisSubject(servers.redis, f"{NAMESPACE}_runner_sdk"),
        HelixSessionSubject(helix_subject("redis", servers, workdir, "_runner")),
        SDKSQLAlchemySubject(servers.postgres, f"{NAMESPACE}_runner_sdk"),
        HelixSessionSubject(helix_subject("postgres", servers, workdir, "_runner")),
    ]
