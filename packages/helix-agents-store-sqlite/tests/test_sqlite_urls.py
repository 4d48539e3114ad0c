"""``sqlite://`` URLs, namespaces, options, and a store's life cycle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


async def test_closed_store_cannot_be_entered_again(tmp_path: Path) -> None:
    store = SQLiteStateStore(tmp_path / "a.db")
    async with store:
        await store.create_session("s1")
    with pytest.raises(StoreUnavailableError, match="closed"):
        async with store:
            pytest.fail("re-entered a closed store")
    with pytest.raises(StoreUnavailableError):
        await store.get_session("s1")


@pytest.mark.parametrize("url", ["sqlite:///a%00b.db", "sqlite:///\ud800.db"])
def test_nul_or_surrogate_in_url_path_is_a_validation_error(url: str) -> None:
    with pytest.raises(ValidationError, match="SQLite"):
        open_url(url)


@pytest.mark.parametrize("path", ["a\x00b.db", "\udc80.db", b"a.db", 5])
def test_unusable_paths_are_validation_errors(path: Any) -> None:
    with pytest.raises(ValidationError, match="SQLite path"):
        SQLiteStateStore(path)


def test_url_with_a_host_never_echoes_the_password() -> None:
    with pytest.raises(ValidationError) as refused:
        open_store("sqlite://app:s3cret@db.example/x.db")
    assert "s3cret" not in str(refused.value)
    assert "host" in str(refused.value)


def test_unknown_keyword_option_is_named() -> None:
    with pytest.raises(ValidationError, match="'pool_size'"):
        open_store("sqlite:///x.db", pool_size=3)


@pytest.mark.parametrize(
    ("url", "options", "named"),
    [
        ("sqlite:///x.db?busy_timeout=nan", {}, "busy_timeout"),
        ("sqlite:///x.db?busy_timeout=1e999", {}, "busy_timeout"),
        ("sqlite:///x.db", {"busy_timeout": "1"}, "busy_timeout"),
        ("sqlite:///x.db", {"busy_timeout": 10**400}, "busy_timeout"),
        ("sqlite:///x.db", {"synchronous": 5}, "synchronous"),
        ("sqlite:///x.db", {"max_messages": "3"}, "max_messages"),
        ("sqlite:///x.db", {"max_messages": True}, "max_messages"),
        ("sqlite:///x.db", {"max_messages": 2**70}, "max_messages"),
        ("sqlite:///x.db", {"clock": "now"}, "clock"),
    ],
)
def test_bad_option_values_are_validation_errors_naming_the_option(
    url: str, options: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValidationError, match=named):
        open_store(url, **options)
