"""The agent-facing tools: results the model reads, failures spelled out in them."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import (
    Budget,
    EstimateCounter,
    ToolCatalog,
    ToolSource,
    activate_tool_source,
    offload_output,
    read_tool_output,
    recall_history,
)
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio
BUDGET = Budget(context_window=100_000, offload_tokens=200, counter=EstimateCounter())
LOG = "".join(f"line {i}: fine\n" for i in range(1, 400)) + "line 400: ERROR disk full\n"
CATALOG = ToolCatalog(
    [ToolSource("shell", "builtin", ("run",)), ToolSource("math", "code", ("add", "mul"))]
)


async def test_CS_16_offload_then_read_back() -> None:
    async with MemoryStateStore() as store:
        sid = (await store.create_session()).id
        assert await offload_output(store, sid, "short", budget=BUDGET) == "short"
        summary = await offload_output(store, sid, LOG, budget=BUDGET, tool_name="df")
        assert summary.startswith("[Output stored as out-") and "400: line 400: ERROR" in summary
        output_id = summary.split()[3]
        found = await read_tool_output(store, sid, output_id, grep="ERROR", context_lines=1)
        assert found.splitlines()[:2] == ["399- line 399: fine", "400: line 400: ERROR disk full"]
        assert "[1 matching lines of 400]" in found


async def test_CS_18_failures_are_results_the_model_reads() -> None:
    async with MemoryStateStore() as store:
        sid = (await store.create_session()).id
        assert (await read_tool_output(store, sid, "out-x")).startswith(
            "[error context_output_not_found: "
        )
        bad = await recall_history(store, sid, grep="(")
        assert bad.startswith("[error context_invalid_pattern: ")
        none = await recall_history(store, sid, grep="nothing")
        assert none == "[no row matches (the archive and the live log were both searched)]"
        unknown = await activate_tool_source(store, sid, CATALOG, "gitlab")
        assert unknown.startswith("[error context_unknown_tool_source: ") and "math" in unknown
        stored = await offload_output(store, sid, LOG, budget=BUDGET)
        output_id = stored.split()[3]
        await store.close()
        # An outage is an error the model reads, never "nothing found" or a lost output.
        failed = await offload_output(store, sid, LOG, budget=BUDGET)
        assert failed.startswith(
            "[offload failed, the full output follows] [error state_unavailable"
        )
        assert failed.endswith(LOG)
        for down in (
            await recall_history(store, sid, grep="ERROR"),
            await read_tool_output(store, sid, output_id, grep="ERROR"),
            await activate_tool_source(store, sid, CATALOG, "math"),
        ):
            assert down.startswith("[error state_unavailable")


async def test_CS_17_activations_replay_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    async with SQLiteStateStore(path) as store:
        sid = (await store.create_session()).id
        await store.append_messages(
            sid, MessageCommit(messages=(ChatMessage(role="user", content="multiply"),))
        )
        assert "'math' is active" in await activate_tool_source(store, sid, CATALOG, "math")
    async with SQLiteStateStore(path) as store:
        active = CATALOG.active_from_history(await store.get_messages(sid))
        assert active == ["math"]
        assert CATALOG.visible_tools(active) == ["run", "add", "mul"]
        assert CATALOG.activation_tool(active) is None
        again = await activate_tool_source(store, sid, CATALOG, "math")
        assert again == "Tool source 'math' is already active."


async def test_CS_18_recall_renders_each_hit() -> None:
    async with MemoryStateStore() as store:
        sid = (await store.create_session()).id
        await store.append_messages(
            sid,
            MessageCommit(
                messages=(
                    ChatMessage(role="user", content="hello\nthe code is 4711"),
                    ChatMessage(role="assistant", content="noted"),
                )
            ),
        )
        text = await recall_history(store, sid, grep=r"code is \d+")
        assert text.splitlines() == [
            "row 0 (user) line 2: the code is 4711",
            "[1 hit, newest first]",
        ]
