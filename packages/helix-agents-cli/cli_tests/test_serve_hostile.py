"""What the inspector shows is text, and never a secret (docs/inspector.md, INS-12, INS-13)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from .serve_client import inspect, make_demo
from .serve_process import served
from .serve_seed import HOSTILE, hostile

pytestmark = pytest.mark.anyio

SID = f"s{HOSTILE}"
ESCAPED = "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"


async def test_INS_13_hostile_content_is_text_on_every_page(sqlite_url: str) -> None:
    await hostile(sqlite_url)
    async with inspect(sqlite_url) as client:
        answers = [
            await client.get("/"),
            await client.get("/session", params={"id": SID}),
            await client.get("/session/checkpoint", params={"id": SID, "cp": "cp"}),
            await client.get("/session/history", params={"id": SID, "grep": "script"}),
            await client.get("/session", params={"id": HOSTILE}),  # a 404 naming it
            await client.get("/session/records", params={"id": SID}),
        ]
    for answer in answers:
        assert "<script>document" not in answer.text
        assert "<img src=x" not in answer.text
        assert ESCAPED in answer.text
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    session = answers[1].text
    # every place of the session page: id, user, metadata, rows, hidden row, call, result,
    # approval, queued item, late answer
    assert session.count(ESCAPED) >= 10
    # and the lists read from the dump (INS-15 … INS-17): the delivered item's key, the
    # resolved approval's id, the output's tool name
    for testid in ("context-items", "approvals", "outputs"):
        for page in (session, answers[-1].text):
            start = page.index(f'data-testid="{testid}"')
            listing = page[start : page.index("</section>", start)]
            assert listing.count(ESCAPED) >= 1, testid
    assert f"<code>d{ESCAPED}" in session and f"<code>a{ESCAPED}" in session
    assert f'data-testid="output-size">t{ESCAPED}' in session
    # the only scripts of any page are the server's own
    assert all(a.text.count("<script") == 1 for a in answers)


def _with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    user = parts.username or "postgres"
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))


async def test_INS_12_the_password_is_never_in_a_page_or_the_output(
    pg_url: str, tmp_path: Path
) -> None:
    # The local server trusts loopback: the password is sent and ignored, as a real one would be.
    secret = "s3cret-Pa55"
    await make_demo(pg_url)
    url = _with_password(pg_url, secret)
    with served(url, tmp_path, "--write", debug=True) as server:
        async with httpx.AsyncClient(base_url=server.base) as client:
            pages = [
                await client.get("/"),
                await client.get("/session", params={"id": "demo-trip"}),
                await client.get("/session", params={"id": "nope"}),
                await client.get("/session/checkpoint", params={"id": "demo-trip", "cp": "x"}),
                await client.post("/session/approval", data={"id": "demo-trip"}),
            ]
    assert [p.status_code for p in pages] == [200, 200, 404, 400, 403]
    assert "demo-trip" in pages[0].text
    for page in pages:
        assert secret not in page.text and secret not in str(page.headers)
    assert "serving postgresql://postgres:***@" in server.output()
    assert secret not in server.output()
