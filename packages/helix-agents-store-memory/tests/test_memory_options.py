"""The memory store's options: every wrong one is a ValidationError when the store is built."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import ValidationError, open_store
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"bogus": 1}, "'bogus'"),
        ({"pool_size": 3, "schema": "x"}, "'pool_size', 'schema'"),
        ({"clock": "now"}, "clock"),
        ({"max_messages": 0}, "max_messages"),
        ({"max_messages": True}, "max_messages"),
        ({"namespace": 5}, "namespace"),
    ],
)
def test_unknown_or_bad_keyword_option_is_a_validation_error_naming_it(
    options: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValidationError, match=named) as refused:
        open_store("memory://", **options)
    assert refused.value.code == "validation_error" and not refused.value.retryable


@pytest.mark.parametrize("url", ["memory://?max_messages=1", "memory://name#frag"])
def test_a_query_in_the_url_is_refused_not_taken_as_the_name(url: str) -> None:
    with pytest.raises(ValidationError, match="keywords"):
        open_store(url)


def test_a_query_in_the_url_never_echoes_a_password() -> None:
    with pytest.raises(ValidationError) as refused:
        open_store("memory://app:s3cret@x/?a=1")
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize(
    "arguments", [{"data": 5}, {"data": {}}, {"clock": "now"}, {"max_messages": "3"}]
)
def test_constructor_arguments_of_the_wrong_kind_are_validation_errors(
    arguments: dict[str, Any],
) -> None:
    with pytest.raises(ValidationError):
        MemoryStateStore(**arguments)


def test_no_message_names_a_session_that_is_not_there() -> None:
    with pytest.raises(ValidationError) as refused:
        MemoryStateStore(max_messages=0)
    assert "session" not in str(refused.value)


async def test_every_known_option_reaches_the_store_through_open_store() -> None:
    moment = datetime(2030, 1, 2, tzinfo=UTC)
    async with open_store("memory://", clock=lambda: moment, max_messages=3) as store:
        assert isinstance(store, MemoryStateStore) and store.max_messages == 3
        assert (await store.create_session("s")).created_at == moment
