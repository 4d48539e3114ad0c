"""The adapters' marks on sessions (docs/integrations/sharing.md, ADP-1 and ADP-2)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from helix_agents.core.adapters import ADAPTER_KEY, check_writable, mark, owner_of, readable
from helix_agents.core.errors import ForeignSessionError
from helix_agents.core.messages import JsonObject
from helix_agents.core.models import SessionInfo


def _info(metadata: JsonObject) -> SessionInfo:
    now = datetime.now(UTC)
    return SessionInfo(
        id="s1",
        user_id=None,
        created_at=now,
        last_activity_at=now,
        message_count=0,
        metadata=metadata,
    )


def test_mark_keeps_the_adapters_own_metadata() -> None:
    assert mark("adk", {"app_name": "a"}) == {"app_name": "a", ADAPTER_KEY: "adk"}
    assert mark("langgraph") == {ADAPTER_KEY: "langgraph"}


def test_an_unmarked_session_is_shared() -> None:
    info = _info({"app": 1})
    assert owner_of(info) is None
    assert readable(info, "adk")
    check_writable(info, "openai-agents")


def test_a_marked_session_is_its_adapters_alone() -> None:
    info = _info(mark("langgraph"))
    assert owner_of(info) == "langgraph"
    assert readable(info, "langgraph")
    assert not readable(info, "adk")
    check_writable(info, "langgraph")
    with pytest.raises(ForeignSessionError) as caught:
        check_writable(info, "adk")
    err = caught.value
    assert (err.code, err.session_id, err.owner, err.adapter) == (
        "state_foreign_session",
        "s1",
        "langgraph",
        "adk",
    )
    assert "langgraph" in str(err) and "'s1'" in str(err)


def test_a_mark_that_is_not_text_is_no_mark() -> None:
    assert owner_of(_info({ADAPTER_KEY: 3})) is None
