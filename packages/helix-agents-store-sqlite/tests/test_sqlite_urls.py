"""``sqlite://`` URLs, namespaces, options, and a store's life cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    StoreUnavailableError,
    ValidationError,
    open_store,
)
from helix_agents.store_sqlite import SQLiteStateStore, open_url

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_relative_url_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_store("sqlite:///rel.db") as store:
        await store.create_session("s1")
    assert (tmp_path / "rel.db").is_file()


async def test_four_slashes_name_an_absolute_path(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/abs.db"
    assert url.startswith("sqlite:////")
    async with open_store(url) as store:
        await store.create_session("s1")
    async with SQLiteStateStore(tmp_path / "abs.db") as store:
        assert await store.get_session("s1") is not None


async def test_namespace_lives_in_a_sibling_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/agent.db"
    async with open_store(url, namespace="tenant_1") as scoped, open_store(url) as plain:
        await scoped.create_session("s1")
        assert await plain.get_session("s1") is None
        assert await scoped.get_session("s1") is not None
    assert (tmp_path / "agent.tenant_1.db").is_file()
    assert isinstance(open_url(url, namespace="t"), SQLiteStateStore)
    assert open_url(url, namespace="t").path == str(tmp_path / "agent.t.db")


def test_query_options_and_keywords(tmp_path: Path) -> None:
    store = open_url(f"sqlite:///{tmp_path}/a.db?busy_timeout=1.5&synchronous=full")
    assert (store.config.busy_timeout, store.config.synchronous) == (1.5, "FULL")
    store = open_url(f"sqlite:///{tmp_path}/a.db?busy_timeout=1.5", busy_timeout=9)
    assert store.config.busy_timeout == 9
    assert open_url(f"sqlite:///{tmp_path}/a.db", max_messages=3).max_messages == 3


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///:memory:",
        "sqlite://",
        "sqlite:///",
        "sqlite://host/x.db",
        "sqlite:///x.db?journal=off",
        "sqlite:///x.db?busy_timeout=soon",
        "sqlite:///x.db?synchronous=sometimes",
    ],
)
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        open_store(url)


@pytest.mark.parametrize("namespace", ["", "a/b", "..", "x" * 65])
def test_bad_namespaces_are_refused(namespace: str) -> None:
    with pytest.raises(ValidationError):
        open_url("sqlite:///x.db", namespace=namespace)


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        SQLiteStateStore(tmp_path / "a.db", max_messages=0)
    with pytest.raises(ValidationError):
        SQLiteStateStore(tmp_path / "a.db", busy_timeout=-1)


async def test_unopenable_file_is_store_unavailable(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError):
        async with SQLiteStateStore(tmp_path / "missing-dir" / "a.db"):
            pytest.fail("opened a file in a missing directory")


async def test_store_used_before_open_or_after_close(tmp_path: Path) -> None:
    store = SQLiteStateStore(tmp_path / "a.db")
    with pytest.raises(StoreUnavailableError, match="not open"):
        await store.create_session()
    async with store:
        sid = (await store.create_session()).id
    with pytest.raises(StoreUnavailableError, match="closed"):
        await store.append_messages(
            sid, MessageCommit(messages=(ChatMessage(role="user", content="x"),))
        )
    await store.close()
