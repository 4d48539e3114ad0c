"""``show`` prints every kind of row and every record a session holds."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    MessageCommit,
    ScopedStateDelta,
    open_store,
)
from helix_agents.core.models import Usage

from .conftest import Helix
from .seed import T0

pytestmark = pytest.mark.anyio


async def test_show_lists_the_records_of_a_session(helix: Helix, seeded: str) -> None:
    shown = helix("show", seeded, "chat", "--json")
    assert shown.code == 0, shown.err
    data = json.loads(shown.out)
    assert data["checkpoints"] == {"count": 1, "latest": ["cp-1"]}
    assert [a["approval_id"] for a in data["pending_approvals"]] == ["ap-1"]
    # mem-1 was delivered by the commit; note-1 was recorded after it.
    assert [i["key"] for i in data["undelivered_context_items"]] == ["note-1"]
    assert [a["call_id"] for a in data["undelivered_late_answers"]] == ["c0"]
    assert data["scoped_state"] == {} and data["langgraph_checkpoints"] == 0
    assert data["messages"][2]["calls"] == [{"name": "search", "arguments": "{}"}]
    table = helix("show", seeded, "chat", "--width", "200")
    assert table.code == 0, table.err
    lines = table.out.splitlines()
    assert "checkpoints:   1 (latest: cp-1)" in lines
    assert 'approvals:     ap-1 book({"train": "9:04"})' in lines
    assert "context items: note-1 (notice)" in lines
    assert "late answers:  c0 weather" in lines
    assert "search({})" in table.out and "null" not in table.out


OPENAI_CALL = {
    "type": "function_call",
    "name": "get_weather",
    "arguments": '{"city": "Lyon"}',
    "call_id": "call-9",
}
OPENAI_RESULT = {"type": "function_call_output", "call_id": "call-9", "output": "12 C"}
ADK_CALL = {
    "author": "planner",
    "content": {
        "role": "model",
        "parts": [{"function_call": {"name": "lookup", "args": {"q": 1}}}],
    },
}


def _provider_row(field: str, value: dict[str, Any], role: str = "assistant") -> ChatMessage:
    """A row as the adapters write it: the item or event as JSON text in a provider field."""
    return ChatMessage.model_validate({"role": role, "content": None, field: json.dumps(value)})


async def test_show_reads_tool_calls_of_adapter_rows_and_session_state(
    helix: Helix, sqlite_url: str
) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("mixed")
        await store.append_messages(
            "mixed",
            MessageCommit(
                messages=(
                    _provider_row("openai_item", OPENAI_CALL),
                    _provider_row("openai_item", OPENAI_RESULT, role="tool"),
                    _provider_row("adk_event", ADK_CALL),
                ),
                scoped_state=(ScopedStateDelta(scope="session", changes={"city": "Lyon"}),),
            ),
        )
    data = json.loads(helix("show", sqlite_url, "mixed", "--json").out)
    assert [m["calls"] for m in data["messages"]] == [
        [{"name": "get_weather", "arguments": '{"city": "Lyon"}'}],
        [],
        [{"name": "lookup", "arguments": {"q": 1}}],
    ]
    assert data["scoped_state"] == {"city": "Lyon"}
    table = helix("show", sqlite_url, "mixed", "--width", "200")
    assert table.code == 0, table.err
    assert 'get_weather({"city": "Lyon"})' in table.out
    assert "call-9 → 12 C" in table.out
    assert 'lookup({"q": 1})' in table.out
    assert 'session state: {"city": "Lyon"}' in table.out.splitlines()
    assert "null" not in table.out


async def test_a_langgraph_thread_is_named_with_its_checkpoints(
    helix: Helix, sqlite_url: str
) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("thread-1")
        for n in range(3):
            await store.save_checkpoint(
                "thread-1",
                Checkpoint(
                    checkpoint_id=f"c\x1f\x1fcp-{n}",
                    run_id="graph",
                    message_count=0,
                    state={"n": n},
                    created_at=T0.replace(second=n),
                ),
            )
    table = helix("show", sqlite_url, "thread-1")
    assert table.code == 0, table.err
    assert "rows:          LangGraph thread with 3 checkpoints" in table.out.splitlines()
    assert "latest: c␟␟cp-2, c␟␟cp-1, c␟␟cp-0" in table.out
    data = json.loads(helix("show", sqlite_url, "thread-1", "--json").out)
    assert data["langgraph_checkpoints"] == 3 and data["checkpoints"]["count"] == 3


async def test_show_gives_the_title_and_the_redactions(helix: Helix, sqlite_url: str) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("red", metadata={"k": 1})
        await store.set_session_title("red", "Card dispute")
        row = ChatMessage(role="user", content="card 4111 1111 1111 1111")
        await store.append_messages("red", MessageCommit(messages=(row,)))
        record = await store.redact_message("red", 0, reason="card number", actor="ops")
    data = json.loads(helix("show", sqlite_url, "red", "--json").out)
    assert (data["session"]["title"], data["session"]["metadata"]) == ("Card dispute", {"k": 1})
    assert data["session"]["metadata_version"] == 1
    assert data["redactions"] == [record.model_dump(mode="json")]
    assert data["messages"][0]["row"] == {
        "role": "user",
        "content": "[redacted]",
        "redacted": True,
    }
    table = helix("show", sqlite_url, "red", "--width", "200")
    assert table.code == 0, table.err
    lines = table.out.splitlines()
    assert "title:         Card dispute" in lines
    at = record.model_dump(mode="json")["at"]
    assert f"redactions:    row 0 by ops at {at}: card number" in lines
    assert "4111" not in table.out


async def test_show_gives_a_branch_and_its_parent(helix: Helix, sqlite_url: str) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("trunk")
        rows = tuple(ChatMessage(role="user", content=f"turn {n}") for n in range(3))
        await store.append_messages("trunk", MessageCommit(messages=rows))
        branch = await store.fork_session("trunk", "twig", at=2)
    assert branch.branch_of is not None
    data = json.loads(helix("show", sqlite_url, "trunk", "--json").out)
    assert data["branches"] == [branch.branch_of.model_dump(mode="json")]
    twig = json.loads(helix("show", sqlite_url, "twig", "--json").out)
    assert twig["session"]["branch_of"] == branch.branch_of.model_dump(mode="json")
    assert twig["branches"] == []
    lines = helix("show", sqlite_url, "twig", "--width", "200").out.splitlines()
    assert "branch of:     trunk at row 2" in lines
    lines = helix("show", sqlite_url, "trunk", "--width", "200").out.splitlines()
    assert "branches:      twig at row 2" in lines


async def test_show_gives_the_usage_and_the_expiry(helix: Helix, sqlite_url: str) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("paid")
        used = Usage(model="gpt-4o", input_tokens=120, cached_tokens=100, output_tokens=7)
        row = ChatMessage(role="assistant", content="done")
        await store.append_messages("paid", MessageCommit(messages=(row,), usage=(used,)))
        expiry = await store.set_session_expiry("paid", expires_at=datetime(2099, 1, 1, tzinfo=UTC))
    data = json.loads(helix("show", sqlite_url, "paid", "--json").out)
    assert data["usage"]["input_tokens"] == 120 and data["usage"]["models"][0]["model"] == "gpt-4o"
    assert data["expiry"] == expiry.model_dump(mode="json")
    lines = helix("show", sqlite_url, "paid", "--width", "200").out.splitlines()
    assert "usage:         1 requests (gpt-4o): 120 in (100 cached), 7 out" in lines
    assert f"expires:       {expiry.model_dump(mode='json')['deadline']}" in lines
