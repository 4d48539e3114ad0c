"""OAI-6..OAI-8: large tool outputs offloaded, the context tools, the strategy kept."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel
from run_helpers import answer, call

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.openai_agents import HelixRun, HelixSession

pytestmark = pytest.mark.anyio

SID = "chat"
BIG = "\n".join("line 777: ERROR disk full" if i == 777 else f"line {i}: ok" for i in range(4000))


@function_tool
def dump_log() -> str:
    """The whole server log (long)."""
    return BIG


def output_of(model: ScriptedModel, index: int) -> str:
    """The newest tool output the model's ``index``-th call was shown."""
    shown: list[Any] = model.calls[index].input
    return str([i for i in shown if i.get("type") == "function_call_output"][-1]["output"])


def output_id(text: str) -> str:
    """The output id an offload summary names."""
    return "out-" + text.split("out-", 1)[1].split()[0]


async def test_OAI_6_a_large_tool_output_reaches_the_model_as_its_summary(
    store: SessionStateStore,
) -> None:
    def read_back(c: ModelCall) -> list[Any]:
        args = {"output_id": output_id(output_of_input(c.input)), "grep": "ERROR"}
        return list(call("read_tool_output", args, "c2").output)

    model = ScriptedModel(
        [call("dump_log", {}, "c1"), ModelStep.respond(read_back), answer("disk full")]
    )
    async with HelixRun(store, SID) as run:
        agent = Agent(name="A", model=model, tools=[dump_log, *run.tools])
        await Runner.run(agent, "what broke?", session=run.session, run_config=run.run_config)
    summary = output_of(model, 1)
    assert summary.startswith("[Output stored as out-") and len(summary) < len(BIG) // 10
    assert "4,000 lines" in summary
    # read_tool_output(grep=...) gives the model the line back, numbered.
    assert "778: line 777: ERROR disk full" in output_of(model, 2)
    # The log keeps the SDK's item exactly; the next run shows the same reference.
    items: list[Any] = await HelixSession(SID, store).get_items()
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [i["output"] for i in outputs if i["call_id"] == "c1"] == [BIG]
    later = ScriptedModel([answer("ok")])
    async with HelixRun(store, SID) as run:
        await Runner.run(
            Agent(name="A", model=later), "again", session=run.session, run_config=run.run_config
        )
    shown: list[Any] = later.calls[0].input
    first = next(i for i in shown if i.get("call_id") == "c1" and "output" in i)  # the c1 output
    assert output_id(first["output"]) == output_id(summary)


def output_of_input(items: list[Any]) -> str:
    """The newest tool output of a model input."""
    return str([i for i in items if i.get("type") == "function_call_output"][-1]["output"])


async def test_OAI_6_static_offloads_nothing_and_has_no_tools(store: SessionStateStore) -> None:
    model = ScriptedModel([call("dump_log", {}, "c1"), answer("ok")])
    async with HelixRun(store, SID, strategy="static") as run:
        assert run.tools == []
        agent = Agent(name="A", model=model, tools=[dump_log])
        await Runner.run(agent, "log?", session=run.session, run_config=run.run_config)
    assert output_of(model, 1) == BIG


async def test_OAI_7_recall_history_finds_an_earlier_message(store: SessionStateStore) -> None:
    async with HelixRun(store, SID) as run:
        await Runner.run(
            Agent(name="A", model=ScriptedModel([answer("the code is 4711")])),
            "code?",
            session=run.session,
            run_config=run.run_config,
        )
    model = ScriptedModel([call("recall_history", {"grep": "code is"}, "c1"), answer("4711")])
    async with HelixRun(store, SID) as run:
        agent = Agent(name="A", model=model, tools=run.tools)
        await Runner.run(agent, "what was it?", session=run.session, run_config=run.run_config)
    found = output_of(model, 1)
    assert "(assistant) line 1: the code is 4711" in found


async def test_OAI_7_a_bad_output_id_is_an_answer_naming_its_code(
    store: SessionStateStore,
) -> None:
    model = ScriptedModel([call("read_tool_output", {"output_id": "out-nope"}, "c1"), answer("ok")])
    async with HelixRun(store, SID) as run:
        agent = Agent(name="A", model=model, tools=run.tools)
        await Runner.run(agent, "read", session=run.session, run_config=run.run_config)
    assert output_of(model, 1).startswith("[error context_output_not_found")


async def test_OAI_8_the_strategy_is_kept_with_the_session(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    async with HelixRun(store, SID, strategy="static") as run:
        pass
    async with HelixRun(other_store, SID) as run:
        assert (run.strategy, run.tools) == ("static", [])
    async with HelixRun(other_store, SID, strategy="dynamic") as run:
        assert [t.name for t in run.tools] == ["read_tool_output", "recall_history"]
    async with HelixRun(store, SID) as run:
        assert run.strategy == "dynamic"
    with pytest.raises(ValidationError) as raised:
        HelixRun(store, SID, strategy="lazy")  # type: ignore[arg-type]
    assert raised.value.session_id == SID


@function_tool
def create_invoice(amount: int) -> str:
    """Create an invoice."""
    return f"invoice for {amount}"


@function_tool
def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


def tool_names(model: ScriptedModel, index: int) -> list[str]:
    """The names of the tools the model's ``index``-th call was offered."""
    return sorted(t.name for t in model.calls[index].tools)


async def test_OAI_9_dynamic_discloses_a_source_once_activated_and_after_a_restart(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    sources = {"billing": [create_invoice, refund]}
    model = ScriptedModel(
        [
            call("activate_tool_source", {"source_name": "billing"}, "c1"),
            call("create_invoice", {"amount": 5}, "c2"),
            answer("done"),
        ]
    )
    async with HelixRun(store, SID, strategy="dynamic", tool_sources=sources) as run:
        agent = Agent(name="A", model=model, tools=run.tools)
        await Runner.run(agent, "bill me", session=run.session, run_config=run.run_config)
    first = model.calls[0]
    assert "create_invoice" not in tool_names(model, 0)
    assert "activate_tool_source" in tool_names(model, 0)
    assert "**billing** [code] (2 tools): create_invoice, refund" in str(first.system_instructions)
    assert {"create_invoice", "refund"} <= set(tool_names(model, 1))
    assert "activate_tool_source" not in tool_names(model, 1)  # nothing left to activate
    assert output_of(model, 2) == "invoice for 5"
    # Another process: the strategy and the activation are replayed from the session.
    later = ScriptedModel([answer("ok")])
    async with HelixRun(other_store, SID, tool_sources=sources) as run:
        assert run.strategy == "dynamic"
        agent = Agent(name="A", model=later, tools=run.tools)
        await Runner.run(agent, "again", session=run.session, run_config=run.run_config)
    assert {"create_invoice", "refund"} <= set(tool_names(later, 0))
    assert "Available Tool Sources" not in str(later.calls[0].system_instructions)


async def test_OAI_9_other_strategies_offer_every_source_s_tools(
    store: SessionStateStore,
) -> None:
    model = ScriptedModel([answer("ok")])
    async with HelixRun(store, SID, tool_sources={"billing": [refund]}) as run:
        agent = Agent(name="A", model=model, tools=run.tools)
        await Runner.run(agent, "hi", session=run.session, run_config=run.run_config)
    assert "refund" in tool_names(model, 0)
    assert "activate_tool_source" not in tool_names(model, 0)
