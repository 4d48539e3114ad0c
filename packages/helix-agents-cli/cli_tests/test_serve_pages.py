"""The inspector's read-only pages through its ASGI app, on each backend whose data
outlives a process (docs/inspector.md, INS-1 … INS-6)."""

from __future__ import annotations

import re

import pytest

from helix_agents.core import ChatMessage, MessageCommit, open_store

from .serve_client import inspect, make_demo
from .serve_seed import SUMMARY, TIMETABLE_MATCH

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite_url", "pg_url", "redis_url"])
async def demo(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A store holding the demo session, and its output's id."""
    url: str = request.getfixturevalue(request.param)
    return url, await make_demo(url)


def _cells(page: str, testid: str) -> str:
    """The element marked ``data-testid=testid`` up to its end tag's line (enough to search)."""
    start = page.index(f'data-testid="{testid}"')
    return page[start : page.index("</", start)]


async def test_INS_1_sessions_lists_every_session_with_its_counts(seeded: str) -> None:
    async with inspect(seeded) as client:
        page = (await client.get("/")).text
        ids = re.findall(r'href="/session\?id=([^"]+)"', page)
        assert ids == ["chat", "orphan", "other", "quiet"]
        # chat: 5 rows, 1 pending approval, 2 queued (a context item and a late answer)
        row = page[page.index("?id=chat") : page.index("</tr>", page.index("?id=chat"))]
        assert re.findall(r'<td class="n">(\d+)</td>', row) == ["5", "1", "2"]


async def test_INS_1_filters_by_user_metadata_and_activity(seeded: str) -> None:
    async with inspect(seeded) as client:
        alice = (await client.get("/", params={"user": "alice"})).text
        assert re.findall(r'href="/session\?id=([^"]+)"', alice) == ["chat", "quiet"]
        meta = (await client.get("/", params={"metadata": '{"k": "v"}'})).text
        assert re.findall(r'href="/session\?id=([^"]+)"', meta) == ["orphan"]
        recent = (await client.get("/", params={"hours": "1"})).text
        assert re.findall(r'href="/session\?id=([^"]+)"', recent) == [
            "chat",
            "orphan",
            "other",
            "quiet",
        ]


@pytest.mark.parametrize(
    "query",
    [{"metadata": "{bad"}, {"metadata": "[1]"}, {"hours": "x"}, {"cursor": "not-a-cursor"}],
)
async def test_INS_1_a_bad_filter_or_cursor_is_a_400_naming_its_code(
    sqlite_url: str, query: dict[str, str]
) -> None:
    await make_demo(sqlite_url)
    async with inspect(sqlite_url) as client:
        answer = await client.get("/", params=query)
    assert answer.status_code == 400
    assert "[validation_error]" in answer.text
    assert "demo-trip" not in answer.text


async def test_INS_1_pages_follow_the_listing_cursor(sqlite_url: str) -> None:
    from helix_agents.core import open_store

    async with open_store(sqlite_url) as store:
        for i in range(55):
            await store.create_session(f"s-{i:03}")
    async with inspect(sqlite_url) as client:
        first = (await client.get("/")).text
        ids = re.findall(r'href="/session\?id=([^"]+)"', first)
        link = re.search(r'rel="next" href="([^"]+)"', first)
        assert link is not None
        second = (await client.get(link.group(1).replace("&amp;", "&"))).text
    more = re.findall(r'href="/session\?id=([^"]+)"', second)
    assert len(ids) == 50 and len(more) == 5
    assert ids + more == [f"s-{i:03}" for i in range(55)]
    assert 'rel="next"' not in second


async def test_INS_2_transcript_marks_hidden_rows_pairs_calls_and_shows_the_compaction(
    demo: tuple[str, str],
) -> None:
    url, output = demo
    async with inspect(url) as client:
        answer = await client.get("/session", params={"id": "demo-trip"})
    page = answer.text
    assert answer.status_code == 200
    indexes = re.findall(r'<tr id="row-(\d+)"', page)
    assert indexes == ["0", "1", "2", "3", "4", "5", "6", "7"]
    hidden = re.findall(r'<tr id="row-(\d+)" class="row role-context hidden-row"', page)
    assert hidden == ["1"]
    assert 'data-testid="hidden-kind">hidden: memory<' in page
    # the compaction marker sits right before row 3, with the summary
    marker = page.index('data-testid="compaction"')
    assert page.index('id="row-2"') < marker < page.index('id="row-3"')
    assert SUMMARY in page
    assert "starts at row 3; 1 compaction; history preserved" in page
    # call-7 of row 4 is answered by row 5, and row 5 names it
    assert 'call-7</span> → result in <a href="#row-5">row 5</a>' in page
    assert 'result of call <span class="callid">call-7</span> from <a href="#row-4">' in page
    assert f"out={output}" in page
    # the call the pending approval holds back
    assert 'data-testid="awaiting">awaiting approval ap-1</span>' in page
    assert page.index('id="row-7"') < page.index('data-testid="awaiting"')


async def test_INS_2_pages_of_a_long_session(sqlite_url: str) -> None:
    from helix_agents.core import ChatMessage, MessageCommit, open_store

    async with open_store(sqlite_url) as store:
        await store.create_session("long")
        rows = tuple(ChatMessage(role="user", content=f"m{i}") for i in range(250))
        await store.append_messages("long", MessageCommit(messages=rows))
    async with inspect(sqlite_url) as client:
        last = (await client.get("/session", params={"id": "long"})).text
        middle = (await client.get("/session", params={"id": "long", "from": "100"})).text
    assert re.findall(r'<tr id="row-(\d+)"', last) == [str(i) for i in range(150, 250)]
    assert re.findall(r'<tr id="row-(\d+)"', middle) == [str(i) for i in range(100, 200)]
    assert 'data-follow="yes"' in last and 'data-follow="no"' in middle
    assert "from=0" in middle and "from=200" in middle


async def test_INS_2_a_missing_session_is_a_404_naming_it(sqlite_url: str) -> None:
    await make_demo(sqlite_url)
    async with inspect(sqlite_url) as client:
        answer = await client.get("/session", params={"id": "nope"})
    assert answer.status_code == 404
    assert "[state_session_not_found]" in answer.text and "nope" in answer.text


async def test_INS_3_approvals_queued_items_checkpoints_and_state(seeded: str) -> None:
    async with inspect(seeded) as client:
        page = (await client.get("/session", params={"id": "chat"})).text
    assert "Pending approvals (1)" in page and "ap-1" in page and "book" in page
    assert "Context items (1 queued, " in page and "note-1" in page
    assert "Late answers (1 queued, " in page and "weather" in page
    assert "cp=cp-1" in page
    assert "run-1 (awaiting_approval)" in page
    assert 'data-testid="resolve"' not in page  # read-only: no action (INS-8)


async def test_INS_4_a_checkpoint_as_json_and_its_diff(demo: tuple[str, str]) -> None:
    url, _ = demo
    async with inspect(url) as client:
        alone = await client.get("/session/checkpoint", params={"id": "demo-trip", "cp": "cp-2"})
        both = await client.get(
            "/session/checkpoint", params={"id": "demo-trip", "cp": "cp-2", "against": "cp-1"}
        )
        missing = await client.get("/session/checkpoint", params={"id": "demo-trip", "cp": "x"})
    assert alone.status_code == 200
    assert "&#34;step&#34;: &#34;compare&#34;" in _cells(alone.text, "state")
    rows = re.findall(r'<tr class="(\w+)"><td><code>([^<]+)</code>', both.text)
    assert rows == [("added", "$.options"), ("changed", "$.step")]
    assert missing.status_code == 400 and "[validation_error]" in missing.text


async def test_INS_5_an_output_read_by_range_and_by_grep(demo: tuple[str, str]) -> None:
    url, output = demo
    async with inspect(url) as client:
        grep = await client.get(
            "/session/output", params={"id": "demo-trip", "out": output, "grep": "TER"}
        )
        lines = await client.get(
            "/session/output",
            params={"id": "demo-trip", "out": output, "start": "10", "end": "12"},
        )
        bad = await client.get(
            "/session/output", params={"id": "demo-trip", "out": output, "grep": "(a"}
        )
        unknown = await client.get(
            "/session/output", params={"id": "demo-trip", "out": "out-" + "0" * 32}
        )
    matches = re.findall(r'<tr class="match"><td class="idx">(\d+)</td><td><pre>([^<]*)', grep.text)
    assert matches == [("124", f"07:02 {TIMETABLE_MATCH} Paris-Bercy → Lyon Part-Dieu 29 EUR")]
    assert re.findall(r'<td class="idx">(\d+)</td>', lines.text) == ["10", "11", "12"]
    assert bad.status_code == 400 and "[context_invalid_pattern]" in bad.text
    assert unknown.status_code == 404 and "[context_output_not_found]" in unknown.text


async def test_INS_6_history_search_marks_its_hits(demo: tuple[str, str]) -> None:
    url, _ = demo
    async with inspect(url) as client:
        page = (
            await client.get("/session/history", params={"id": "demo-trip", "grep": "cheaper"})
        ).text
        tool = (
            await client.get(
                "/session/history", params={"id": "demo-trip", "tool": "search_trains"}
            )
        ).text
    assert re.findall(r"#row-(\d+)", page) == ["3"]
    assert re.findall(r"#row-(\d+)", tool) == ["5", "4"]


async def test_INS_14_a_long_session_leaves_its_window_to_the_window_page(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helix_agents.cli._serve import _pages

    await make_demo(sqlite_url)
    monkeypatch.setattr(_pages, "WINDOW_INLINE_ROWS", 7)  # the demo has 8 rows
    async with inspect(sqlite_url) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        window = (await client.get("/session/window", params={"id": "demo-trip"})).text
    assert re.findall(r'<tr id="row-(\d+)"', page) == [str(i) for i in range(8)]
    assert 'data-testid="compaction"' not in page
    assert 'href="/session/window?id=demo-trip">read it</a>' in page
    assert 'data-testid="window-start">3 (' in window
    assert SUMMARY in window and "#row-3" in window


async def test_INS_4_a_langgraph_checkpoint_is_decoded(sqlite_url: str) -> None:
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import START, MessagesState, StateGraph

    from helix_agents.core import open_store
    from helix_agents.langgraph import HelixCheckpointSaver

    def reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
        return {"messages": [("assistant", "the 9:04 TGV")]}

    builder = StateGraph(MessagesState)
    builder.add_node(reply)
    builder.add_edge(START, "reply")
    async with open_store(sqlite_url) as store:
        graph = builder.compile(checkpointer=HelixCheckpointSaver(store))
        config: RunnableConfig = {"configurable": {"thread_id": "thread-1"}}
        await graph.ainvoke({"messages": [HumanMessage("a train to Lyon")]}, config)
        ids = [c.checkpoint_id for c in await store.page_checkpoints("thread-1", prefix="c\x1f")]
    latest, earlier = ids[0], ids[1]  # the reply, and the input before it
    async with inspect(sqlite_url) as client:
        page = (
            await client.get("/session/checkpoint", params={"id": "thread-1", "cp": latest})
        ).text
        both = (
            await client.get(
                "/session/checkpoint",
                params={"id": "thread-1", "cp": latest, "against": earlier},
            )
        ).text
    decoded = _cells(page, "langgraph-state")
    assert "&#34;content&#34;: &#34;a train to Lyon&#34;" in decoded
    assert "&#34;content&#34;: &#34;the 9:04 TGV&#34;" in decoded
    assert "&#34;type&#34;: &#34;human&#34;" in decoded
    # the diff compares the decoded states: the reply shows as an added message
    assert re.search(r'<tr class="added"><td><code>\$\.values\.messages\[1\]</code>', both)


async def test_INS_3_scoped_state_of_the_session_its_user_and_a_named_app(
    sqlite_url: str,
) -> None:
    from helix_agents.core import ChatMessage, MessageCommit, ScopedStateDelta, open_store

    async with open_store(sqlite_url) as store:
        await store.create_session("s", user_id="alice")
        await store.append_messages(
            "s",
            MessageCommit(
                messages=(ChatMessage(role="user", content="hi"),),
                scoped_state=(
                    ScopedStateDelta(scope="session", changes={"step": "pay"}),
                    ScopedStateDelta(scope="user", owner="alice", changes={"seat": "window"}),
                    ScopedStateDelta(scope="app", owner="trips", changes={"turns": 1}),
                ),
            ),
        )
    async with inspect(sqlite_url) as client:
        page = (await client.get("/session", params={"id": "s"})).text
        with_app = (await client.get("/session", params={"id": "s", "app": "trips"})).text
    state = page[
        page.index('data-testid="state"') : page.index(
            "</section>", page.index('data-testid="state"')
        )
    ]
    assert "&#34;step&#34;: &#34;pay&#34;" in state and "&#34;seat&#34;: &#34;window&#34;" in state
    assert "<h3>user alice</h3>" in state
    assert 'data-testid="app-state"' not in page
    assert "&#34;turns&#34;: 1" in _cells(with_app, "app-state")


async def test_INS_1_INS_2_titles_filter_the_sessions_and_redactions_show(sqlite_url: str) -> None:
    async with open_store(sqlite_url) as store:
        await store.create_session("t1", metadata={"k": "v"})
        await store.create_session("t2")
        await store.set_session_title("t1", "Card dispute")
        row = ChatMessage(role="user", content="card 4111 1111 1111 1111")
        await store.append_messages("t1", MessageCommit(messages=(row,)))
        await store.redact_message("t1", 0, reason="card number", actor="ops")
    async with inspect(sqlite_url) as client:
        listed = (await client.get("/", params={"title": "DISPUTE"})).text
        assert re.findall(r'href="/session\?id=([^"]+)"', listed) == ["t1"]
        assert "Card dispute" in _cells(listed, "title")
        page = (await client.get("/session", params={"id": "t1"})).text
        assert "Card dispute" in _cells(page, "title")
        assert "row 0 by ops" in _cells(page, "redactions")
        assert "card number" in page and "4111" not in page and "[redacted]" in page
        bad = await client.get("/", params={"title": "x" * 201})
    assert bad.status_code == 400 and "[validation_error]" in bad.text
