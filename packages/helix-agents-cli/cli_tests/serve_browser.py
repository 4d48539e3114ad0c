"""Debian's ``chromium`` driven by Playwright: never a browser Playwright downloads.

A missing ``/usr/bin/chromium`` skips the test loudly, or fails it under
``HELIX_REQUIRE_BACKENDS=1`` (as a missing database server does). Screenshots go to
the directory ``HELIX_INSPECTOR_SHOTS`` names, when set (docs/img/ for the docs).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from helix_agents.contract import backend_unavailable

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS_ENV = "HELIX_INSPECTOR_SHOTS"


@pytest.fixture
def chromium() -> Path:
    """Debian's chromium, else a loud skip (a failure under ``HELIX_REQUIRE_BACKENDS=1``)."""
    if not CHROMIUM.exists():
        backend_unavailable(
            f"no browser at {CHROMIUM}: the inspector's browser tests need Debian's chromium "
            "(apt-get install -y chromium)"
        )
    return CHROMIUM


@pytest.fixture
async def browser(chromium: Path) -> AsyncIterator[Browser]:
    """Chromium, headless, for one test."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(chromium), args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def new_page(browser: Browser) -> Page:
    """A page of a fresh context, the size of the docs' screenshots, failing on any
    script error or dialog (hostile content must run nothing)."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    async def refuse(dialog: object) -> None:
        errors.append(f"a dialog opened: {dialog}")

    page.on("dialog", refuse)
    page.set_default_timeout(10_000)
    setattr(page, "helix_errors", errors)  # noqa: B010 - read back by errors_of
    return page


def errors_of(page: Page) -> list[str]:
    """Script errors and dialogs the page has seen."""
    errors: list[str] = getattr(page, "helix_errors")  # noqa: B009
    return errors


def _shots() -> Path | None:
    where = os.environ.get(SHOTS_ENV)
    if not where:
        return None
    Path(where).mkdir(parents=True, exist_ok=True)
    return Path(where)


async def shot(page: Page, name: str) -> None:
    """A screenshot of the page as ``name``.png, when ``HELIX_INSPECTOR_SHOTS`` is set."""
    where = _shots()
    if where is not None:
        await page.screenshot(path=str(where / f"{name}.png"), full_page=False)
