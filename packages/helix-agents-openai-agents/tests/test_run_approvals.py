"""OAI-4, OAI-5: the SDK's tool approvals as pending approvals, decided and resumed anywhere."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Runner
from agents.testing import ScriptedModel
from run_helpers import answer, approval_agent, call

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.errors import ApprovalNotFoundError
from helix_agents.openai_agents import (
    ApprovalsPendingError,
    HelixRun,
    decide_approval,
    pause_checkpoint_id,
)

pytestmark = pytest.mark.anyio

SID = "chat"


async def paused(store: SessionStateStore) -> tuple[HelixRun, str]:
    """A run stopped on one ``delete_file`` call, paused; and its approval id."""
    agent, _ = approval_agent(call("delete_file", {"path": "/tmp/x"}, "c1"))
    async with HelixRun(store, SID, user_id="u") as run:
        result = await Runner.run(agent, "clean up", session=run.session, run_config=run.run_config)
        approvals = await run.pause(result)
    assert len(approvals) == 1
    return run, approvals[0].approval_id


async def resumed(store: SessionStateStore) -> Any:
    """The paused run resumed on ``store``: its final output."""
    agent, _ = approval_agent(answer("all clean"))
    async with HelixRun(store, SID, resume=True) as run:
        state = await run.resume_state(agent)
        result = await Runner.run(agent, state, session=run.session, run_config=run.run_config)
    return result.final_output


async def test_OAI_4_an_interruption_is_a_pending_approval_with_a_checkpoint(
    store: SessionStateStore,
) -> None:
    run, approval_id = await paused(store)
    [pending] = await store.list_pending_approvals(SID)
    assert (pending.approval_id, pending.tool_name, pending.tool_call_id, pending.input) == (
        approval_id,
        "delete_file",
        "c1",
        {"path": "/tmp/x"},
    )
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert (info.current_run.run_id, info.current_run.status) == (run.run_id, "awaiting_approval")
    checkpoint = await store.get_checkpoint(SID, pause_checkpoint_id(run.run_id))
    assert checkpoint is not None and checkpoint.message_count == info.message_count
    assert isinstance(checkpoint.state, dict) and checkpoint.state["approvals"] == [approval_id]
    assert "run_state" in checkpoint.state


async def test_OAI_4_a_run_without_interruptions_pauses_nothing(
    store: SessionStateStore,
) -> None:
    agent, _ = approval_agent(answer("nothing to do"))
    async with HelixRun(store, SID) as run:
        result = await Runner.run(agent, "hi", session=run.session, run_config=run.run_config)
        assert await run.pause(result) == []
    assert await store.list_pending_approvals(SID) == []
    assert await store.list_checkpoints(SID) == []


async def test_OAI_5_decided_and_resumed_in_another_process(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    _, approval_id = await paused(store)
    assert await decide_approval(other_store, SID, approval_id, approve=True) == "resolved"
    again = await decide_approval(store, SID, approval_id, approve=False)
    assert again == "already-resolved"
    assert await store.list_pending_approvals(SID) == []
    assert await resumed(other_store) == "all clean"
    items: list[Any] = await HelixRun(store, SID).session.get_items()
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == ["deleted /tmp/x"]  # the tool ran once, after the approval
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert info.current_run.status == "completed"


async def test_OAI_5_a_rejection_reaches_the_model_with_its_message(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    _, approval_id = await paused(store)
    decided = await decide_approval(
        other_store, SID, approval_id, approve=False, message="not that file"
    )
    assert decided == "resolved"
    model = ScriptedModel([answer("ok, I left it")])
    agent, _ = approval_agent()
    agent = agent.clone(model=model)
    async with HelixRun(other_store, SID, resume=True) as run:
        state = await run.resume_state(agent)
        await Runner.run(agent, state, session=run.session, run_config=run.run_config)
    last: Any = model.calls[0].input[-1]
    assert (last["type"], last["output"]) == ("function_call_output", "not that file")


async def test_OAI_5_of_racing_deciders_exactly_one_resolves_and_its_decision_counts(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    _, approval_id = await paused(store)
    stores = [store, other_store] * 4
    answers = await asyncio.gather(
        *(
            decide_approval(s, SID, approval_id, approve=n % 2 == 0, message=f"decider {n}")
            for n, s in enumerate(stores)
        )
    )
    assert sorted(answers) == ["already-resolved"] * 7 + ["resolved"]
    winner = answers.index("resolved")
    model = ScriptedModel([answer("done")])
    agent, _ = approval_agent()
    agent = agent.clone(model=model)
    async with HelixRun(other_store, SID, resume=True) as run:
        await Runner.run(
            agent, await run.resume_state(agent), session=run.session, run_config=run.run_config
        )
    last: Any = model.calls[0].input[-1]
    expected = "deleted /tmp/x" if winner % 2 == 0 else f"decider {winner}"
    assert last["output"] == expected


async def test_OAI_5_resuming_before_the_decision_writes_nothing(
    store: SessionStateStore,
) -> None:
    _, approval_id = await paused(store)
    before = await store.get_session(SID)
    with pytest.raises(ApprovalsPendingError) as raised:
        await HelixRun(store, SID, resume=True).__aenter__()
    assert raised.value.code == "validation_error"
    assert (raised.value.session_id, raised.value.approval_ids) == (SID, (approval_id,))
    assert await store.get_session(SID) == before
    assert [a.approval_id for a in await store.list_pending_approvals(SID)] == [approval_id]


async def test_OAI_5_an_unknown_approval_is_refused(store: SessionStateStore) -> None:
    await paused(store)
    with pytest.raises(ApprovalNotFoundError):
        await decide_approval(store, SID, "no-such:approval", approve=True)
    assert len(await store.list_pending_approvals(SID)) == 1
    assert len(await store.list_checkpoints(SID)) == 1


async def test_OAI_5_nothing_to_resume_is_a_validation_error(store: SessionStateStore) -> None:
    with pytest.raises(ValidationError) as raised:
        await HelixRun(store, SID, resume=True).__aenter__()
    assert raised.value.session_id == SID
