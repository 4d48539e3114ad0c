"""URLs, options and namespaces: a bad one is a ValidationError naming it, never a driver error.

No server is needed: every refusal comes before a connection is made. None of
them shows the URL's password.
"""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.core import ValidationError, open_store
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

from .no_secrets import assert_not_shown

SECRET = "Pw-7531:@/%"
URL = "postgresql://app:Pw-7531%3A%40%2F%25@db.internal:5432/agents"


def _refused(url: str, **options: Any) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        open_store(url, **options)
    error = caught.value
    assert type(error) is ValidationError
    assert (error.code, error.retryable) == ("validation_error", False)
    assert_not_shown(SECRET, error=error)
    return error


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("postgresql://app:Pw-7531%3A%40%2F%25@[bad", "malformed"),
        ("postgresql://app:Pw-7531%3A%40%2F%25@[bad/db", "malformed"),
        (f"{URL.replace(':5432', ':abc')}", "port 'abc'"),
        (f"{URL.replace(':5432', ':99999')}", "port '99999'"),
        (f"{URL}?no_such_option=1", "no_such_option"),
        (f"{URL}?sslmode=sometimes", "sslmode 'sometimes'"),
        (f"{URL}?max_size=0", "max_size=0"),
        (f"{URL}?max_size=many", "max_size='many'"),
        (f"{URL}?min_size=-1", "min_size=-1"),
        (f"{URL}?min_size=5&max_size=2", "max_size=2"),
        (f"{URL}?timeout=-1", "timeout=-1"),
        (f"{URL}?timeout=0", "timeout=0"),
        (f"{URL}?operation_timeout=nan", "operation_timeout=nan"),
        (f"{URL}?operation_timeout=inf", "operation_timeout=inf"),
        (f"{URL}?connect_timeout=1e999", "connect_timeout=inf"),
        (f"{URL}?connect_timeout=soon", "connect_timeout='soon'"),
        (f"{URL}?max_idle=-inf", "max_idle=-inf"),
        (f"{URL}?max_lifetime=0", "max_lifetime=0"),
        (f"{URL}?check=maybe", "check='maybe'"),
        (f"{URL}?auto_migrate=2", "auto_migrate='2'"),
        (f"{URL}?max_messages=0", "max_messages"),
        (f"{URL}?prepare=always", "prepare='always'"),
        (f"{URL}?max_messages={'9' * 5000}", "max_messages"),
    ],
)
def test_a_bad_url_or_url_option_is_a_validation_error_naming_it(url: str, named: str) -> None:
    """Malformed URLs, ports, unknown or out-of-range options: refused up front, named."""
    assert named in str(_refused(url))


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"no_such_option": 1}, "no_such_option"),
        ({"max_size": 0}, "max_size=0"),
        ({"max_size": "3"}, "max_size='3'"),
        ({"min_size": True}, "min_size=True"),
        ({"timeout": -1}, "timeout=-1"),
        ({"operation_timeout": float("nan")}, "operation_timeout=nan"),
        ({"operation_timeout": 0}, "operation_timeout=0"),
        ({"operation_timeout": "5"}, "operation_timeout='5'"),
        ({"connect_timeout": float("inf")}, "connect_timeout=inf"),
        ({"check": "yes"}, "check='yes'"),
        ({"auto_migrate": "yes"}, "auto_migrate='yes'"),
        ({"max_messages": 2**80}, "max_messages"),
        ({"prepare": True}, "prepare=True"),
        ({"prepare": "ON"}, "prepare='ON'"),
    ],
)
def test_a_bad_keyword_option_is_a_validation_error_naming_it(
    options: dict[str, Any], named: str
) -> None:
    """The same options given as open_store keywords: refused up front, named."""
    assert named in str(_refused(URL, **options))


@pytest.mark.parametrize(
    "namespace", ["pg_catalog", "pg_toast", "pg_temp_1", "pg_anything", "information_schema"]
)
def test_a_system_schema_as_namespace_is_a_validation_error(namespace: str) -> None:
    """PostgreSQL's own schemas are refused as not retryable, before any connection."""
    error = _refused(URL, namespace=namespace)
    assert repr(namespace) in str(error) and "reserved" in str(error)
    with pytest.raises(ValidationError):
        PostgresStateStore(URL, schema=namespace)


@pytest.mark.parametrize(
    "arguments",
    [
        {"conninfo": 5432},
        {"conninfo": b"postgresql://h/db"},
        {"conninfo": "host=h port=x"},
        {"conninfo": "host=h password='unterminated"},
        {"conninfo": URL, "pool_settings": {"max_size": 3}},
        {"conninfo": URL, "operation_timeout": -1},
        {"conninfo": URL, "operation_timeout": True},
        {"conninfo": URL, "clock": "now"},
    ],
)
def test_bad_constructor_arguments_are_validation_errors(arguments: dict[str, Any]) -> None:
    """The constructor checks its conninfo and options too."""
    with pytest.raises(ValidationError):
        PostgresStateStore(**arguments)


def test_pool_settings_check_their_values() -> None:
    """PoolSettings refuses what the pool would reject later (or accept, like a negative wait)."""
    for bad in (
        {"min_size": -1},
        {"max_size": 0},
        {"min_size": 3, "max_size": 2},
        {"timeout": -1.0},
        {"connect_timeout": 0.0},
        {"max_idle": float("nan")},
    ):
        with pytest.raises(ValidationError):
            PoolSettings(**bad)
    assert PoolSettings(min_size=0, max_size=1, connect_timeout=0.5).connect_timeout == 0.5


def _pool_conninfo(store: object) -> tuple[str, dict[str, Any]]:
    assert isinstance(store, PostgresStateStore)
    conninfo, kwargs = store.pool.conninfo, store.pool.kwargs
    assert isinstance(conninfo, str) and isinstance(kwargs, dict)
    return conninfo, kwargs


def test_options_reach_the_store_and_its_pool() -> None:
    """Timeouts from the URL or keywords (keywords win); libpq options stay in the conninfo."""
    store = open_store(
        f"{URL}?operation_timeout=2.5&connect_timeout=1.5&application_name=a%20b&max_size=3",
        min_size=0,
    )
    assert isinstance(store, PostgresStateStore)
    assert store.operation_timeout == 2.5
    assert (store.pool.min_size, store.pool.max_size) == (0, 3)
    conninfo, kwargs = _pool_conninfo(store)
    assert kwargs["connect_timeout"] == 2  # libpq's whole seconds, rounded up
    assert "application_name='a b'" in conninfo
    assert "password" not in conninfo and SECRET not in conninfo
    keyword = open_store(f"{URL}?operation_timeout=2.5", operation_timeout=7)
    assert isinstance(keyword, PostgresStateStore) and keyword.operation_timeout == 7.0
    default = PostgresStateStore(URL)
    assert default.operation_timeout == 10.0
    assert _pool_conninfo(default)[1]["connect_timeout"] == 5


def test_huge_times_are_accepted_and_fit_libpq() -> None:
    """A time too large to matter is fine; libpq gets an int it can read."""
    store = open_store(URL, operation_timeout=1e300, connect_timeout=1e300, timeout=1e300)
    assert isinstance(store, PostgresStateStore) and store.operation_timeout == 1e300
    assert _pool_conninfo(store)[1]["connect_timeout"] == 2**31 - 1


def test_the_store_repr_shows_where_it_connects_but_not_the_password() -> None:
    """repr(store) names the server, the database and the schema; the password is masked."""
    shown = repr(open_store(URL, namespace="agents"))
    assert "db.internal:5432/agents" in shown and "'agents'" in shown
    assert_not_shown(SECRET, texts=[shown])
    keyword = repr(PostgresStateStore(f"host=h dbname=d user=u password='{SECRET}'"))
    assert_not_shown(SECRET, texts=[keyword])


@pytest.mark.parametrize(
    "conninfo",
    [
        "host=h password=Pw-7531 tail",
        "host=h password='Pw-7531",
        "postgresql://app:Pw-7531@[bad/db",
        "postgresql://app:Pw-7531@h/db?unknown=1",
    ],
)
def test_a_malformed_conninfo_never_shows_its_password(conninfo: str) -> None:
    """Where libpq quotes what it could not parse, the password is masked or left out."""
    with pytest.raises(ValidationError) as caught:
        PostgresStateStore(conninfo)
    assert_not_shown("Pw-7531", error=caught.value)
    assert_not_shown("tail", error=caught.value)


def test_namespace_in_the_url_is_the_schema_as_the_keyword_is() -> None:
    """docs/backends/postgres.md: ``schema`` (or ``namespace=``) in the URL."""

    def schema(url: str, **options: Any) -> str:
        store = open_store(url, **options)
        assert isinstance(store, PostgresStateStore)
        return store.schema

    assert schema(f"{URL}?namespace=tenant_1") == schema(URL, namespace="tenant_1") == "tenant_1"
    assert schema(f"{URL}?namespace=t&schema=t") == "t"
    assert schema(f"{URL}?namespace=t", namespace="kw") == "kw"
    error = _refused(f"{URL}?schema=a&namespace=b")
    assert "'a'" in str(error) and "'b'" in str(error)
    assert "reserved" in str(_refused(f"{URL}?namespace=pg_catalog"))
