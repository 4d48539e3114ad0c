"""A session's records beside its rows: items and late answers queued and delivered,
approvals pending and resolved, every offloaded output, read through core's
``dump_session`` (docs/inspector.md, INS-15 … INS-18)."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx
import pytest

from helix_agents.cli._serve import inspector_app
from helix_agents.core import (
    ContextItem,
    LateAnswer,
    LateAnswerDelivery,
    MessageCommit,
    PendingApproval,
    StoredContextItem,
    open_store,
)
from helix_agents.core.backend import Engine
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_memory._engine import MemoryEngine

from .serve_client import BASE, inspect, make_demo

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
AGENT_LOOP = Path(__file__).resolve().parents[3] / "examples" / "agent_loop.py"


@pytest.fixture(params=["sqlite_url", "pg_url", "redis_url"])
async def demo(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A store holding the demo session, and its output's id."""
    url: str = request.getfixturevalue(request.param)
    return url, await make_demo(url)


def _section(page: str, testid: str) -> str:
    start = page.index(f'data-testid="{testid}"')
    return page[start : page.index("</section>", start)]


async def test_INS_15_items_and_late_answers_queued_and_delivered_with_their_row(
    demo: tuple[str, str],
) -> None:
    url, _ = demo
    async with open_store(url) as store:
        for call in ("call-9", "call-10"):
            answer = LateAnswer(call_id=call, tool_name="get_forecast", output="sunny", at=NOW)
            await store.record_late_answer("demo-trip", answer)
        notice = ContextItem(kind="notice", content="late: sunny")
        await store.append_messages(  # row 8 carries call-9's answer; call-10 stays queued
            "demo-trip",
            MessageCommit(
                messages=(notice.to_message(),),
                deliver_late_answers=(LateAnswerDelivery(call_id="call-9", row_offset=0),),
            ),
        )
        queued = ContextItem(kind="notice", content="the user is in a hurry")
        await store.record_context_item(
            "demo-trip", StoredContextItem(key="note-2", item=queued, at=NOW)
        )
    async with inspect(url) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        older = (await client.get("/session", params={"id": "demo-trip", "from": "5"})).text
    items = _section(page, "context-items")
    assert "Context items (1 queued, 1 delivered)" in items
    # memory:m-1 was delivered by row 1 (on this page: an anchor), note-2 is queued
    assert re.findall(r"<code>([^<]+)</code>", items) == ["memory:m-1", "note-2"]
    assert 'href="#row-1" data-testid="carried-by">row 1</a>' in items
    assert items.count('<span class="badge">queued</span>') == 1
    answers = _section(page, "late-answers")
    assert "Late answers (1 queued, 1 delivered)" in answers
    assert 'href="#row-8" data-testid="carried-by">row 8</a>' in answers
    assert "call-10" in answers
    # on a page not holding the row, the link opens the page that starts at it
    assert 'href="/session?id=demo-trip&amp;from=1#row-1"' in _section(older, "context-items")


async def test_INS_16_approvals_pending_and_resolved(demo: tuple[str, str]) -> None:
    url, _ = demo
    async with open_store(url) as store:
        assert await store.resolve_approval("demo-trip", "ap-1") == "resolved"
        later = PendingApproval(
            approval_id="ap-2",
            tool_name="pay",
            tool_call_id="call-2",
            input={"eur": 29},
            requested_at=NOW,
        )
        await store.add_pending_approvals("demo-trip", [later])
    async with inspect(url) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
    approvals = _section(page, "approvals")
    pending, resolved = approvals.split('data-testid="resolved"')
    assert "Pending approvals (1)" in pending and "<code>ap-2</code>" in pending
    assert "ap-1" not in pending
    assert ">Resolved (1)</h3>" in resolved and "<code>ap-1</code>" in resolved


async def test_INS_17_every_output_with_its_size_and_a_grep_and_range_form(
    demo: tuple[str, str],
) -> None:
    url, named = demo
    async with open_store(url) as store:
        other = await store.store_output("demo-trip", "a\nb\n", tool_name="ls")  # type: ignore[attr-defined]
    async with inspect(url) as client:
        page = (await client.get("/session", params={"id": "demo-trip", "from": "0"})).text
    outputs = _section(page, "outputs")
    assert "Offloaded outputs (2)" in outputs
    # in the order they were stored, the second named by no row
    ids = re.findall(r'<a href="/session/output\?id=demo-trip&amp;out=(out-\w+)">', outputs)
    assert ids == [named, other.output_id]
    sizes = re.findall(r'data-testid="output-size">([^<]+)<', outputs)
    assert sizes == ["search_trains, 10,517 characters, 300 lines", "ls, 4 characters, 2 lines"]
    forms = re.findall(r'name="out" value="(out-\w+)">\s*(.*?)</form>', outputs, re.S)
    assert [(oid, 'name="grep"' in rest, 'name="start"' in rest) for oid, rest in forms] == [
        (named, True, False),
        (named, False, True),
        (other.output_id, True, False),
        (other.output_id, False, True),
    ]


async def test_INS_18_a_long_session_lists_what_the_protocol_lists_and_links_its_records(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helix_agents.cli._serve import _pages

    output = await make_demo(sqlite_url)
    async with open_store(sqlite_url) as store:
        await store.store_output("demo-trip", "x\n", tool_name="ls")  # type: ignore[attr-defined]
    monkeypatch.setattr(_pages, "WINDOW_INLINE_ROWS", 7)  # the demo has 8 rows
    async with inspect(sqlite_url) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        records = (await client.get("/session/records", params={"id": "demo-trip"})).text
    assert 'data-testid="records-partial"' in page
    assert 'href="/session/records?id=demo-trip" data-testid="all-records"' in page
    assert 'data-testid="resolved"' not in page
    assert "Context items (0 queued)" in page  # the delivered memory is not listed
    # only the output a shown row names
    assert re.findall(r"out=(out-\w+)\">", _section(page, "outputs")) == [output]
    # the records page reads them all
    assert 'data-testid="records-partial"' not in records
    assert "Context items (0 queued, 1 delivered)" in records
    assert 'href="/session?id=demo-trip&amp;from=1#row-1"' in records
    assert "Offloaded outputs (2)" in records and ">Resolved (0)</h3>" in records


async def test_INS_18_a_store_that_cannot_dump_lists_what_the_protocol_lists() -> None:
    class NoDump(MemoryEngine):
        dump = Engine.dump

    store = MemoryStateStore()
    store.engine = NoDump(store.data)
    await store.create_session("s")
    item = ContextItem(kind="notice", content="queued note")
    await store.record_context_item("s", StoredContextItem(key="note", item=item, at=NOW))
    app = inspector_app(store, url="memory://", write=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        page = await client.get("/session", params={"id": "s"})
    assert page.status_code == 200
    assert "this store cannot read its delivered items" in _section(page.text, "records-partial")
    assert "Context items (1 queued)" in page.text and "queued note" in page.text


async def test_INS_16_the_agent_loop_demo_shows_its_deliveries_and_resolved_approval(
    tmp_path: Path,
) -> None:
    # `make demo`: the scripted agent loop writes trip-1 into ./helix-demo.db
    done = await anyio.run_process([sys.executable, str(AGENT_LOOP)], cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr.decode()
    async with inspect(f"sqlite:///{tmp_path / 'helix-demo.db'}") as client:
        page = (await client.get("/session", params={"id": "trip-1"})).text
    assert "Pending approvals (0)" in page
    assert "<code>approve-train</code>" in _section(page, "approvals").split("Resolved (1)")[1]
    items, answers = _section(page, "context-items"), _section(page, "late-answers")
    assert "Context items (0 queued, 1 delivered)" in items and "pref:units" in items
    assert "Late answers (0 queued, 1 delivered)" in answers and "call-weather" in answers
    assert 'data-testid="carried-by"' in items and 'data-testid="carried-by"' in answers
