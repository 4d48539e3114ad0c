"""ADP-4/ADP-5 as a property: any SDK-shaped batch comes back exactly or is refused whole."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from agents import TResponseInputItem
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from items_hostile import exact, hostile_items, same

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.openai_agents import HelixSession, ItemNotJsonError

pytestmark = pytest.mark.anyio

SEED: TResponseInputItem = {"role": "user", "content": "kept"}


@settings(
    max_examples=150,
    deadline=None,
    # One store per backend serves every example; each example has a session of its own.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(hostile_items, min_size=1, max_size=3), seeded=st.booleans())
async def test_adp5_items_round_trip_exactly_or_are_refused_whole(
    store: SessionStateStore, batch: list[Any], seeded: bool
) -> None:
    sid = f"p-{uuid.uuid4().hex}"
    before: list[Any] = [SEED] if seeded else []
    if seeded:
        await HelixSession(sid, store).add_items([SEED])
    accepted = all(exact(item) for item in batch)
    event("accepted" if accepted else "refused")
    note(f"accepted by the rules: {accepted}")
    session = HelixSession(sid, store)
    if accepted:
        await session.add_items(batch)
        # A new instance: what comes back is what the store kept.
        back = await HelixSession(sid, store).get_items()
        assert same(back, before + batch)
        assert [json.dumps(i) for i in back] == [json.dumps(i) for i in before + batch]
        return
    with pytest.raises(ItemNotJsonError) as caught:
        await session.add_items(batch)
    err = caught.value
    assert isinstance(err, ValidationError) and isinstance(err, TypeError)
    assert err.code == "validation_error" and err.session_id == sid
    assert err.path.startswith("items[")
    if seeded:
        assert await HelixSession(sid, store).get_items() == [SEED]
        assert await store.get_message_count(sid) == 1
    else:
        assert await store.get_session(sid) is None  # no session left behind
