"""The inspector's write actions and what guards them, through its ASGI app
(docs/inspector.md, INS-8 … INS-11)."""

from __future__ import annotations

import pytest

from helix_agents.core import open_store

from .serve_client import BASE, inspect, make_demo, token_of

pytestmark = pytest.mark.anyio

RESOLVE = {"id": "demo-trip", "approval": "ap-1"}


@pytest.fixture(params=["sqlite_url", "pg_url", "redis_url"])
async def demo_url(request: pytest.FixtureRequest) -> str:
    """A store holding the demo session."""
    url: str = request.getfixturevalue(request.param)
    await make_demo(url)
    return url


async def _pending(url: str) -> list[str]:
    async with open_store(url) as store:
        return [a.approval_id for a in await store.list_pending_approvals("demo-trip")]


async def test_INS_8_read_only_offers_no_action_and_refuses_posts(demo_url: str) -> None:
    async with inspect(demo_url) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        answer = await client.post("/session/approval", data={**RESOLVE, "csrf": "x"})
    assert answer.status_code == 405 and "[read_only]" in answer.text
    assert '<form method="post"' not in page and 'name="csrf"' not in page
    assert await _pending(demo_url) == ["ap-1"]


async def test_INS_9_resolve_once_then_already_resolved(demo_url: str) -> None:
    async with inspect(demo_url, write=True) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        form = {**RESOLVE, "csrf": token_of(page)}
        first = await client.post("/session/approval", data=form, follow_redirects=True)
        second = await client.post("/session/approval", data=form, follow_redirects=True)
    assert 'data-testid="notice">resolved<' in first.text
    assert "Pending approvals (0)" in first.text
    assert 'data-testid="notice">already-resolved<' in second.text
    assert await _pending(demo_url) == []


async def test_INS_9_record_a_context_item_once_per_key(demo_url: str) -> None:
    async with inspect(demo_url, write=True) as client:
        page = (await client.get("/session", params={"id": "demo-trip"})).text
        form = {
            "id": "demo-trip",
            "key": "note-9",
            "kind": "notice",
            "content": "the user is in a hurry",
            "csrf": token_of(page),
        }
        first = await client.post("/session/context-item", data=form, follow_redirects=True)
        again = await client.post("/session/context-item", data=form, follow_redirects=True)
        bad = await client.post(
            "/session/context-item", data={**form, "kind": "nonsense", "key": "k2"}
        )
    assert 'data-testid="notice">recorded<' in first.text
    assert "Context items (1 queued, 1 delivered)" in first.text and "note-9" in first.text
    assert 'data-testid="notice">already-recorded<' in again.text
    assert bad.status_code == 400 and "[validation_error]" in bad.text
    async with open_store(demo_url) as store:
        items = await store.list_undelivered_context_items("demo-trip")
    assert [(i.key, i.item.kind, i.item.content) for i in items] == [
        ("note-9", "notice", "the user is in a hurry")
    ]


async def test_INS_9_clear_and_delete_need_the_typed_confirmation(demo_url: str) -> None:
    async with inspect(demo_url, write=True) as client:
        token = token_of((await client.get("/session", params={"id": "demo-trip"})).text)
        base = {"id": "demo-trip", "csrf": token}
        unconfirmed = await client.post("/session/clear", data={**base, "confirm": "no"})
        async with open_store(demo_url) as store:
            info = await store.get_session("demo-trip")
            assert info is not None and info.message_count == 8
        cleared = await client.post(
            "/session/clear", data={**base, "confirm": "demo-trip"}, follow_redirects=True
        )
        async with open_store(demo_url) as store:
            info = await store.get_session("demo-trip")
            assert info is not None and info.message_count == 0
        deleted = await client.post(
            "/session/delete", data={**base, "confirm": "demo-trip"}, follow_redirects=True
        )
    assert unconfirmed.status_code == 400 and "[validation_error]" in unconfirmed.text
    assert 'data-testid="notice">cleared<' in cleared.text
    assert 'data-testid="notice">deleted demo-trip<' in deleted.text
    async with open_store(demo_url) as store:
        assert await store.get_session("demo-trip") is None


@pytest.mark.parametrize(
    ("token", "origin"),
    [(None, None), ("forged", None), ("good", "http://evil.example"), ("good", "null")],
)
async def test_INS_10_a_post_without_the_token_or_from_elsewhere_is_refused(
    sqlite_url: str, token: str | None, origin: str | None
) -> None:
    await make_demo(sqlite_url)
    async with inspect(sqlite_url, write=True) as client:
        real = token_of((await client.get("/session", params={"id": "demo-trip"})).text)
        form = dict(RESOLVE)
        if token is not None:
            form["csrf"] = real if token == "good" else token
        headers = {} if origin is None else {"Origin": origin}
        answer = await client.post("/session/approval", data=form, headers=headers)
        same = await client.post(
            "/session/approval", data={**RESOLVE, "csrf": real}, headers={"Origin": BASE}
        )
    assert answer.status_code == 403 and "[forbidden]" in answer.text
    assert same.status_code == 303  # the same form from this origin goes through
    assert await _pending(sqlite_url) == []


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "10.0.0.1"])
async def test_INS_11_a_request_for_another_host_name_is_refused(
    sqlite_url: str, host: str
) -> None:
    await make_demo(sqlite_url)
    async with inspect(sqlite_url) as client:
        answer = await client.get("/", headers={"Host": host})
        local = await client.get("/", headers={"Host": "localhost:8765"})
    assert answer.status_code == 400 and "demo-trip" not in answer.text
    assert local.status_code == 200 and "demo-trip" in local.text
