"""Fixtures of the repository's own tests: throwaway places on the local servers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from helix_agents.contract import backend_unavailable

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
