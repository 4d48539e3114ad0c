"""Two HelixSession instances on one session (two processes, in effect) never lose or mix items."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from agents import TResponseInputItem

from helix_agents.core import SessionStateStore
from helix_agents.openai_agents import HelixSession

pytestmark = pytest.mark.anyio

TRIALS = 60


def said(*texts: str) -> list[TResponseInputItem]:
    """User messages with these texts."""
    return [{"role": "user", "content": t} for t in texts]


async def test_pop_beside_add_never_loses_an_extra_item(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    for trial in range(TRIALS):
        sid = f"race-{trial}"
        writer, popper = HelixSession(sid, store), HelixSession(sid, other_store)
        await writer.add_items(said("a", "b"))
        batch = said(f"x{trial}", f"y{trial}")
        _, popped = await asyncio.gather(writer.add_items(batch), popper.pop_item())
        left = await writer.get_items()
        # Exactly one item went, the newest at the moment of the pop, and it is the one returned.
        assert popped is not None
        assert len(left) == 3, (trial, left, popped)
        if popped == said("b")[0]:
            assert left == said("a", f"x{trial}", f"y{trial}"), trial
        else:
            assert popped == batch[1] and left == said("a", "b", f"x{trial}"), trial


async def test_concurrent_add_items_never_interleave(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    writers = [HelixSession("s", s) for s in (store, other_store, store, other_store)]
    batches = [said(*(f"w{w}-{n}" for n in range(5))) for w in range(len(writers))]
    rounds = 5
    await asyncio.gather(
        *(w.add_items(b) for _ in range(rounds) for w, b in zip(writers, batches, strict=True))
    )
    items = cast(list[dict[str, Any]], await writers[0].get_items())
    assert len(items) == len(writers) * 5 * rounds
    for start in range(0, len(items), 5):
        chunk = [i["content"] for i in items[start : start + 5]]
        owner = chunk[0].split("-")[0]
        assert chunk == [f"{owner}-{n}" for n in range(5)], chunk
