"""The expiry options (docs/lifecycle.md, "Options") as URL query parameters and keywords
of every backend: parsed, checked before any I/O, refused with a ValidationError."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from helix_agents.core import ValidationError, open_store
from helix_agents.core.backend import StoreBase
from helix_agents.core.expiry import ExpiryPolicy

URLS = {
    "sqlite": "sqlite:///expiry-url-test.db",
    "postgres": "postgresql://127.0.0.1:5432/postgres",
    "redis": "redis://127.0.0.1:6379/0",
}


def _policy(store: Any) -> tuple[ExpiryPolicy, timedelta | None]:
    assert isinstance(store, StoreBase)
    return store._expiry, store._sweep_interval


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_url_sets_every_expiry_option(backend: str) -> None:
    query = "idle_ttl=3600&sweep_interval=30.5&keep_checkpoints=7&checkpoint_ttl=60"
    policy, interval = _policy(open_store(f"{URLS[backend]}?{query}"))
    assert policy == ExpiryPolicy(timedelta(hours=1), 7, timedelta(seconds=60))
    assert interval == timedelta(seconds=30.5)
    _, off = _policy(open_store(f"{URLS[backend]}?sweep_interval=off"))
    assert off is None
    # Keywords win over the URL.
    policy, _ = _policy(open_store(f"{URLS[backend]}?keep_checkpoints=7", keep_checkpoints=2))
    assert policy.keep_checkpoints == 2


def test_redis_takes_the_core_options_and_keeps_its_own_idle_ttl() -> None:
    store = open_store(f"{URLS['redis']}?idle_ttl=5&keep_checkpoints=3&sweep_interval=off")
    policy, interval = _policy(store)
    assert policy == ExpiryPolicy(None, 3, None) and interval is None
    assert store.options.idle_ttl_ms == 5000  # type: ignore[attr-defined]


def test_memory_takes_keywords() -> None:
    policy, interval = _policy(open_store("memory://", idle_ttl=timedelta(minutes=1)))
    assert policy.idle_ttl == timedelta(minutes=1)
    assert interval == timedelta(seconds=60)


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "redis"])
@pytest.mark.parametrize(
    "query",
    [
        "idle_ttl=soon",
        "keep_checkpoints=many",
        "keep_checkpoints=0",
        "checkpoint_ttl=soon",
        "checkpoint_ttl=-1",
        "sweep_interval=never",
        "sweep_interval=0",
    ],
)
def test_a_bad_option_is_a_validation_error(backend: str, query: str) -> None:
    with pytest.raises(ValidationError):
        open_store(f"{URLS[backend]}?{query}")


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "memory"])
@pytest.mark.parametrize("value", [0, -3, "1", float("nan"), 10**13, True])
def test_a_bad_idle_ttl_keyword_is_a_validation_error(backend: str, value: object) -> None:
    url = URLS.get(backend, "memory://")
    with pytest.raises(ValidationError, match="idle_ttl"):
        open_store(url, idle_ttl=value)
