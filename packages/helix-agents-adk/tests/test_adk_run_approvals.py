"""ADKF-4, ADKF-5 on every backend: confirmations paused as pending approvals, decided once
under a race from two store instances, and the invocation resumed with the winner's
decision. Each reads around the plugin through the store."""

from __future__ import annotations

import asyncio

import pytest
from adk_scripted import APP, USER, call, result_of, run, say, scripted, user
from google.adk.agents import LlmAgent
from google.adk.tools.function_tool import FunctionTool
from helix_backends import BACKENDS, Stores

from helix_agents.adk import (
    ApprovalsPendingError,
    HelixPlugin,
    decide_approval,
    pause_checkpoint_id,
    resume_message,
    session_key,
)
from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.errors import ApprovalNotFoundError

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]

SID = session_key(APP, USER, "s1")


def delete_file(path: str) -> str:
    """Delete ``path`` (pretend)."""
    return f"deleted {path}"


def janitor(*steps: object) -> LlmAgent:
    tool = FunctionTool(delete_file, require_confirmation=True)
    return LlmAgent(name="janitor", model=scripted(*steps), tools=[tool])  # type: ignore[arg-type]


async def test_adkf4_adkf5_paused_decided_once_under_a_race_and_resumed(
    stores: Stores, store: SessionStateStore
) -> None:
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    await run(plugin, janitor(call("delete_file", {"path": "a.txt"}, "c-1")), user("Clean up"))
    [pending] = await store.list_pending_approvals(SID)
    assert (pending.tool_name, pending.tool_call_id, pending.input) == (
        "delete_file",
        "c-1",
        {"path": "a.txt"},
    )
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    run_id = info.current_run.run_id
    assert info.current_run.status == "awaiting_approval"
    assert pending.approval_id.startswith(f"{run_id}:")
    assert await store.get_checkpoint(SID, pause_checkpoint_id(run_id)) is not None
    # Undecided: resuming is refused before anything is written.
    rows = await store.get_message_count(SID)
    with pytest.raises(ApprovalsPendingError) as undecided:
        await resume_message(store, SID)
    assert undecided.value.approval_ids == (pending.approval_id,)
    assert undecided.value.session_id == SID
    with pytest.raises(ApprovalNotFoundError) as unknown:
        await decide_approval(store, SID, f"{run_id}:nope", confirmed=True)
    assert unknown.value.code == "state_approval_not_found"
    # Two deciders in two processes at once: one resolves, the other is told so.
    async with stores.store("main") as other:
        answers = await asyncio.gather(
            decide_approval(store, SID, pending.approval_id, confirmed=True),
            decide_approval(other, SID, pending.approval_id, confirmed=False),
        )
    assert sorted(answers) == ["already-resolved", "resolved"]
    won = answers[0] == "resolved"  # True: the confirmation won
    assert await store.list_pending_approvals(SID) == []
    assert await store.get_message_count(SID) == rows
    assert await decide_approval(store, SID, pending.approval_id, confirmed=True) == (
        "already-resolved"
    )
    # Resumed in another process, with the winner's decision.
    async with stores.store("main") as other:
        agent = janitor(say("Done."))
        said = await run(HelixPlugin(other), agent, await resume_message(other, SID))
    assert said[-1:] == ["Done."]
    [request] = agent.model.requests  # type: ignore[union-attr]
    result = result_of(request)
    assert result == ({"result": "deleted a.txt"} if won else {"error": result["error"]})
    if not won:
        assert "rejected" in result["error"]
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert info.current_run.status == "completed" and info.current_run.run_id != run_id
    with pytest.raises(ValidationError) as nothing_paused:
        await resume_message(store, SID)
    assert nothing_paused.value.code == "validation_error"
    assert nothing_paused.value.session_id == SID
