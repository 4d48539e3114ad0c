"""EXP-15: the repository's examples, run for real, moved across every ordered pair of the
four backends; everything the protocol and the adapters read comes back equal, and each
example's next step works on the target (docs/export.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix_agents.contract.rules_context import ctx
from helix_agents.core import SessionStateStore, open_store
from helix_agents.core.messages import dump_message
from helix_agents.core.transfer import export_lines, import_lines

from .conftest import Fresh
from .corpus_examples import adapter_view, examples_next_turn, run_examples
from .test_transfer_matrix import BACKENDS

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def examples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples' SQLite file, made once for the module."""
    return run_examples(tmp_path_factory.mktemp("examples"))


def _options(url: str) -> dict[str, Any]:
    return {"auto_migrate": True} if url.startswith("postgres") else {}


async def _ids(store: SessionStateStore) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=500)).sessions]


async def _export(store: SessionStateStore) -> list[str]:
    return [line async for line in export_lines(store, await _ids(store), whole_store=True)]


async def _view(store: SessionStateStore) -> dict[str, Any]:
    """Everything the protocol reads of every session, then what the adapters read."""
    seen: dict[str, Any] = {}
    users: set[str] = set()
    for listed in (await store.list_all_sessions(first=500)).sessions:
        sid = listed.id
        info = await store.get_session(sid)
        assert info is not None, sid
        users |= {listed.user_id} if listed.user_id else set()
        seen[sid] = {
            "info": info.model_dump(mode="json"),
            "ui": await store.get_ui_message_count(sid),
            "rows": [dump_message(m) for m in await store.get_messages(sid)],
            "pending": await store.list_pending_approvals(sid),
            "items": await store.list_undelivered_context_items(sid),
            "late": await store.list_undelivered_late_answers(sid),
            "checkpoints": await store.list_checkpoints(sid),
            "window": (await ctx(store).get_window(sid)).model_dump(mode="json"),
            "scoped": await store.get_scoped_state("session", sid),
            "truncated": await store.is_truncated(sid),
        }
    for user in sorted(users):
        listed_page = await store.list_sessions(user, first=100)
        seen[f"listed:{user}"] = [s.model_dump(mode="json") for s in listed_page.sessions]
    seen["adapters"] = await adapter_view(store)
    return seen


@pytest.mark.parametrize("source", BACKENDS)
async def test_EXP_15_the_examples_move_to_every_backend_and_take_their_next_turn(
    fresh: Fresh, examples_db: Path, source: str
) -> None:
    async with open_store(f"sqlite:///{examples_db}") as made:
        examples = await _export(made)
    src = fresh(source)
    async with open_store(src, **_options(src)) as before:
        await import_lines(before, lambda: iter(examples), "examples")
        lines = await _export(before)
        ids = await _ids(before)
        view = await _view(before)
        for target in BACKENDS:
            dst = fresh(target)
            async with open_store(dst, **_options(dst)) as after:
                report = await import_lines(after, lambda: iter(lines), "examples")
                assert report.written == ids, target
                assert (await _export(after))[1:] == lines[1:], target
                assert await _view(after) == view, target
                again = await import_lines(after, lambda: iter(lines), "examples")
                assert again.present == ids and not again.written, target
                await examples_next_turn(after, dst)
