"""The inspector end to end: ``helix-store serve`` processes and a real Chromium, on SQLite
and PostgreSQL, over the session ``helix-store demo`` writes (docs/inspector.md, INS-2,
INS-5, INS-7, INS-9, INS-13, INS-15 … INS-17)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import Browser, expect

from helix_agents.core import ChatMessage, MessageCommit, open_store

from .serve_browser import browser, chromium, errors_of, new_page, shot
from .serve_client import make_demo
from .serve_process import served
from .serve_seed import HOSTILE, SUMMARY, TIMETABLE_MATCH, hostile

__all__ = ["browser", "chromium"]  # the fixtures, imported to be found

pytestmark = pytest.mark.anyio

SESSION = "/session?id=demo-trip"


@pytest.fixture(params=["sqlite_url", "pg_url"])
async def demo_url(request: pytest.FixtureRequest) -> str:
    """A store holding the demo session, on SQLite and PostgreSQL."""
    url: str = request.getfixturevalue(request.param)
    await make_demo(url)
    return url


async def test_INS_2_the_demo_session_its_hidden_rows_compaction_and_output_grep(
    browser: Browser, demo_url: str, tmp_path: Path
) -> None:
    page = await new_page(browser)
    served_url, cwd = demo_url, None
    sqlite = demo_url.startswith("sqlite:///")
    if sqlite:
        # the file by a relative path, as the docs' screenshots show it (taken on SQLite)
        served_url, cwd = "sqlite:///store.db", tmp_path
    with served(served_url, tmp_path / "logs", cwd=cwd) as server:
        await page.goto(server.base)
        await expect(page.get_by_role("link", name="demo-trip")).to_be_visible()
        if sqlite:
            await shot(page, "inspector-sessions")
        await page.get_by_role("link", name="demo-trip").click()
        await expect(page.get_by_test_id("session-id")).to_have_text("demo-trip")
        hidden = page.locator("tr.hidden-row")
        await expect(hidden).to_have_count(1)
        await expect(hidden.get_by_test_id("hidden-kind")).to_have_text("hidden: memory")
        await expect(hidden).to_contain_text("prefers trains")
        compaction = page.get_by_test_id("compaction")
        await expect(compaction).to_contain_text(SUMMARY)
        await expect(page.get_by_test_id("approvals")).to_contain_text("book_train")
        # the memory the hidden row carried: delivered, with its row (INS-15)
        carried = page.get_by_test_id("context-items").get_by_test_id("carried-by")
        await expect(carried).to_have_text("row 1")
        await expect(page.get_by_test_id("output-size")).to_have_text(
            "search_trains, 10,517 characters, 300 lines"
        )
        if sqlite:
            await shot(page, "inspector-session")
        # grep the output from the session page's form (INS-17, INS-5)
        outputs = page.get_by_test_id("outputs")
        await outputs.get_by_role("textbox", name="grep").fill("TER")
        await outputs.get_by_role("button", name="Grep").click()
        await expect(page.get_by_test_id("grep")).to_have_value("TER")
        match = page.locator("tr.match")
        await expect(match).to_have_count(1)
        await expect(match).to_contain_text(TIMETABLE_MATCH)
        await expect(match.locator("td.idx")).to_have_text("124")
        if sqlite:
            await shot(page, "inspector-output")
    assert errors_of(page) == []


async def test_INS_9_resolve_in_write_mode_and_a_second_process_sees_it(
    browser: Browser, demo_url: str, tmp_path: Path
) -> None:
    reader = await new_page(browser)
    first = await new_page(browser)
    second = await new_page(browser)
    with (
        served(demo_url, tmp_path / "ro") as read_only,
        served(demo_url, tmp_path / "rw", "--write") as writer,
    ):
        await reader.goto(read_only.base + SESSION[1:])
        await expect(reader.get_by_test_id("approvals")).to_contain_text("Pending approvals (1)")
        await expect(reader.get_by_test_id("resolve")).to_have_count(0)  # read-only
        for tab in (first, second):
            await tab.goto(writer.base + SESSION[1:])
        await first.get_by_test_id("resolve").click()
        await expect(first.get_by_test_id("notice")).to_have_text("resolved")
        await expect(first.get_by_test_id("approvals")).to_contain_text("Pending approvals (0)")
        await expect(first.get_by_test_id("resolved")).to_have_text("Resolved (1)")  # INS-16
        await expect(first.get_by_test_id("approvals").locator(".resolved")).to_have_text("ap-1")
        # the second tab still shows the approval: its click finds it resolved
        await second.get_by_test_id("resolve").click()
        await expect(second.get_by_test_id("notice")).to_have_text("already-resolved")
        # the read-only process's page follows the change, without a reload (INS-7)
        await expect(reader.get_by_test_id("approvals")).to_contain_text(
            "Pending approvals (0)", timeout=15_000
        )
        await expect(reader.get_by_test_id("resolved")).to_have_text("Resolved (1)")
    assert errors_of(reader) == errors_of(first) == errors_of(second) == []


async def test_INS_7_a_session_page_follows_new_rows(
    browser: Browser, sqlite_url: str, tmp_path: Path
) -> None:
    await make_demo(sqlite_url)
    page = await new_page(browser)
    with served(sqlite_url, tmp_path) as server:
        await page.goto(server.base + SESSION[1:])
        await expect(page.get_by_test_id("live")).to_be_visible()
        await expect(page.locator("tr.row")).to_have_count(8)
        async with open_store(sqlite_url) as store:
            await store.append_messages(
                "demo-trip",
                MessageCommit(messages=(ChatMessage(role="user", content="And back on Sunday?"),)),
            )
        await expect(page.locator("tr.row")).to_have_count(9, timeout=15_000)
        await expect(page.locator("#row-8")).to_contain_text("And back on Sunday?")
        await expect(page.get_by_test_id("row-count")).to_have_text("9")
    assert errors_of(page) == []


async def test_INS_13_hostile_content_runs_nothing_in_the_browser(
    browser: Browser, sqlite_url: str, tmp_path: Path
) -> None:
    await hostile(sqlite_url)
    page = await new_page(browser)
    with served(sqlite_url, tmp_path, "--write") as server:
        await page.goto(server.base)
        await expect(page.get_by_test_id("sessions")).to_contain_text(HOSTILE)
        await page.goto(server.base + "session?" + urlencode({"id": f"s{HOSTILE}"}))
        await expect(page.get_by_test_id("session-id")).to_have_text(f"s{HOSTILE}")
        await expect(page.get_by_test_id("user")).to_have_text(f"u{HOSTILE}")
        await expect(page.locator("tr.row")).to_have_count(5)
        await expect(page.get_by_test_id("resolved")).to_have_text("Resolved (1)")
        await expect(page.get_by_test_id("output")).to_contain_text(HOSTILE)
        await expect(page.locator("tr.hidden-row")).to_have_count(2)
        await expect(page.locator("#row-4")).to_contain_text(HOSTILE)
        assert await page.title() != "pwned"
        assert await page.locator("img[src=x]").count() == 0
    assert errors_of(page) == []
