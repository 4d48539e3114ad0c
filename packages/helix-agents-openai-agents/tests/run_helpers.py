"""Agents on the SDK's scripted model, and what the model was shown, for the HelixRun tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agents import Agent, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.tracing import set_tracing_disabled

from helix_agents.core import ContextItem, SessionStateStore, StoredContextItem

set_tracing_disabled(True)


def answer(text: str) -> ModelStep:
    """A model call that answers ``text``."""
    return ModelStep(output=[assistant_message(text)])


def call(tool: str, args: dict[str, Any], call_id: str) -> ModelStep:
    """A model call that calls ``tool``."""
    return ModelStep(output=[function_call(tool, args, call_id=call_id)])


def texts(model: ScriptedModel, index: int) -> list[str]:
    """The text (or item type) of each input item of the model's ``index``-th call."""
    shown: list[Any] = model.calls[index].input
    return [
        i["content"] if isinstance(i.get("content"), str) else str(i.get("type")) for i in shown
    ]


def memory_text(content: str) -> str:
    """What the model reads for a delivered ``memory`` item (core's lowering)."""
    return f'<context kind="memory">\n{content}\n</context>'


async def remember(store: SessionStateStore, session_id: str, key: str, content: str) -> None:
    """Queue a ``memory`` context item, as an app does."""
    item = ContextItem(kind="memory", content=content, memory_ids=[key])
    record = StoredContextItem(key=key, item=item, at=datetime.now(UTC))
    assert (await store.record_context_item(session_id, record)).recorded


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete ``path`` (pretend): needs a person's approval."""
    return f"deleted {path}"


def approval_agent(*steps: ModelStep) -> tuple[Agent[Any], ScriptedModel]:
    """An agent with the approval-gated ``delete_file`` tool."""
    model = ScriptedModel(list(steps))
    return Agent(name="Janitor", model=model, tools=[delete_file]), model
