"""open_store finds backends through entry points and names what to install."""

from __future__ import annotations

import logging
import traceback
from urllib.parse import quote

import pytest

from helix_agents.core import ValidationError, open_store, registry
from helix_agents.core.backend import redact_url
from helix_agents.store_memory import MemoryStateStore


async def test_memory_url_opens_the_memory_store() -> None:
    async with open_store("memory://") as store:
        assert isinstance(store, MemoryStateStore)
        assert (await store.create_session("s")).id == "s"


async def test_named_memory_urls_share_data() -> None:
    async with open_store("memory://shared-test") as a, open_store("memory://shared-test") as b:
        await a.create_session("s")
        assert await b.get_session("s") is not None
    async with open_store("memory://") as fresh:
        assert await fresh.get_session("s") is None


def test_unknown_scheme_lists_known_ones() -> None:
    with pytest.raises(ValidationError, match="mongodb") as caught:
        open_store("mongodb://localhost")
    assert "postgresql://" in str(caught.value)


def test_missing_scheme_is_refused() -> None:
    with pytest.raises(ValidationError, match="no scheme"):
        open_store("agent.db")


def test_uninstalled_backend_names_its_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulate an environment where only core is installed: no entry point answers.
    monkeypatch.setattr(registry, "entry_points", lambda **_: ())
    with pytest.raises(ValidationError, match="pip install helix-agents-store-redis"):
        open_store("redis+cluster://127.0.0.1:7000")


pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://app:s3cret@db:5432/x", "s3cret"),
        ("redis://:s3cret@127.0.0.1:abc/0", "s3cret"),
        ("redis+cluster://u:s3cret@h1:1,h2:2", "s3cret"),
        ("mysql://app:p@ss:w0rd@h/x", "p@ss:w0rd"),
        ("rediss://h/0?password=s3cret&x=1", "s3cret"),
        ("rediss://h/0?ssl_ca_certs=/ca.pem&ssl_password=s3cret", "s3cret"),
        ("postgresql://h/db?sslpassword=s3cret&auth_token=t0ken", "s3cret"),
        ("host=h password='s 3 cret' user=u", "3 cret"),
        # Reserved characters a password should have escaped, and did not.
        ("postgresql://app:pa/ss3cret@db/x", "ss3cret"),
        ("redis://:se?cr#3t@127.0.0.1:6379/0", "cr#3t"),
        ("redis://:s3c#ret@127.0.0.1/0", "ret"),
        ("postgresql://u:s3/c@r:et@h1:5432,h2/db?sslmode=require", "r:et"),
        ("postgresql://u:s%2F3cret@h/db", "3cret"),
        # user:password@ per host (multi-host and cluster URLs).
        ("postgresql://u:pw1x@h1:5432,u:pw2x@h2:5433/db", "pw2x"),
        ("postgresql://u:pw1x@h1:5432,u:pw2x@h2:5433/db", "pw1x"),
        ("redis+cluster://u:s3cret@h1:7000,u:s3cret@h2:7001/0", "s3cret"),
        ("redis+cluster://h1:7000,h2:7001?password=s3cret", "s3cret"),
        ("postgresql://h/db?PGPASSWORD=s3cret", "s3cret"),
        ("postgresql://h/db?options=-c%20x&password=s3cret", "s3cret"),
        # A URL inside a message, with text after it.
        ("could not reach redis://:pa/ss@h:1/0 (refused) for ada@example", "pa/ss"),
    ],
)
def test_redact_url_masks_every_secret(url: str, secret: str) -> None:
    shown = redact_url(url)
    assert secret not in shown
    assert "***" in shown


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://h1:5432,h2:5433/db?sslmode=require",
        "redis://127.0.0.1:6379/0?key_prefix=a",
        "sqlite:///tmp/a:b@c.db",
        "memory://",
    ],
)
def test_redact_url_leaves_a_url_without_secrets_alone(url: str) -> None:
    assert redact_url(url) == url


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is not None and all(current is not f for f in found):
            found.append(current)
            todo += [current.__cause__, current.__context__]
    return found


@pytest.mark.parametrize(
    "url",
    [
        "mysql://app:s3cret@db/x",  # an unknown scheme
        "postgresql//app:s3cret@db/x",  # no scheme
        "http://[bad:s3cret@",
        "redis+cluster://:s3cret@127.0.0.1:7000,127.0.0.1:x",  # a bad cluster host:port
        "sqlite://app:s3cret@db.example/x.db",  # a SQLite URL with a host
        "redis://:s3cret@127.0.0.1:abc/0",  # a port redis-py could not parse
        "postgresql://app:s3cret@127.0.0.1:abc/db",
        "memory://app:s3cret@x/?a=1",
    ],
)
def test_open_store_refusals_never_echo_a_password(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Not in the message, repr, args or traceback of the error or its causes, nor a log."""
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ValidationError) as caught:
        open_store(url)
    assert (caught.value.code, caught.value.retryable) == ("validation_error", False)
    shown = ["".join(traceback.format_exception(caught.value))]
    shown += [f"{e!s} {e!r} {e.args!r}" for e in _chain(caught.value)]
    shown += [logging.Formatter().format(record) for record in caplog.records]
    assert [text for text in shown if "s3cret" in text] == []


_UNESCAPED = ["qx/zv9k", "qx?zv9k", "qx#zv9k", "qx@zv/9k", "qx zv9k"]
_SHAPES = [
    "postgresql://app:{}@127.0.0.1:1/db",
    "postgresql://app:{}@127.0.0.1:1,127.0.0.1:2/db",
    "redis://:{}@127.0.0.1:1/0",
    "rediss://u:{}@127.0.0.1:1/0",
    "redis+cluster://:{}@127.0.0.1:1,127.0.0.1:2",
]


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("secret", _UNESCAPED)
def test_a_password_that_should_have_been_escaped_is_refused_unseen(
    shape: str, secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every part of it: a parser would read its tail as a port, a path or a query."""
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ValidationError) as caught:
        open_store(shape.format(secret))
    assert "percent-encode" in str(caught.value)
    shown = ["".join(traceback.format_exception(caught.value))]
    shown += [logging.Formatter().format(record) for record in caplog.records]
    parts = [secret, *secret.replace("?", "/").replace("#", "/").replace(" ", "/").split("/")]
    assert [p for p in parts if any(p in text for text in shown)] == []


@pytest.mark.parametrize("shape", _SHAPES[:4])
def test_the_same_password_escaped_is_accepted(shape: str) -> None:
    store = open_store(shape.format(quote("p@ss/w?#9 x", safe="")))
    assert store is not None


def test_an_at_sign_in_a_query_value_asks_for_an_escape_too() -> None:
    with pytest.raises(ValidationError, match="%40"):
        open_store("postgresql://h:5432/db?application_name=a@b")
    assert open_store("postgresql://h:5432/db?application_name=a%40b") is not None
    assert open_store("sqlite:///tmp/a@b.db") is not None


class _EntryPoint:
    """A backend registered by entry point only, as a third-party distribution would."""

    name = "toy"

    def load(self) -> object:
        return lambda url, **options: MemoryStateStore(**options)


async def test_a_backend_found_by_entry_point_alone_needs_no_line_in_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scheme core has never heard of opens, and the unknown-scheme error lists it."""
    monkeypatch.setattr(
        registry,
        "entry_points",
        lambda *, group, name=None: [e for e in [_EntryPoint()] if name in (None, e.name)],
    )
    async with open_store("toy://", max_messages=3) as store:
        assert isinstance(store, MemoryStateStore) and store.max_messages == 3
    with pytest.raises(ValidationError, match="known: toy://"):
        open_store("mongodb://localhost")
