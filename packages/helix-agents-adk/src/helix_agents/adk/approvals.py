"""ADK's tool confirmations as the store's pending approvals (ADKF-4, ADKF-5).

A run that stopped on confirmations (``FunctionTool(require_confirmation=...)`` or
``tool_context.request_confirmation``) leaves one checkpoint (:func:`pause_checkpoint_id`)
naming its invocation and one pending approval per ``adk_request_confirmation`` call.
Any process lists them (``store.list_pending_approvals``), decides one with
:func:`decide_approval`, and resumes the invocation with :func:`resume_message`.
See docs/integrations/adk.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from google.adk.events.event import Event
from google.genai import types

from helix_agents.core import PendingApproval, SessionStateStore
from helix_agents.core.adapters import ApprovalsPendingError, paused_run, record_decision
from helix_agents.core.models import ApprovalResolution

__all__ = [
    "CONFIRMATION_CALL",
    "ApprovalsPendingError",
    "decide_approval",
    "decision_checkpoint_id",
    "pause_checkpoint_id",
    "resume_message",
]

CONFIRMATION_CALL = "adk_request_confirmation"
"""The function call ADK emits for a tool confirmation (the user answers it)."""


def pause_checkpoint_id(run_id: str) -> str:
    """The id of the checkpoint a run paused for confirmations leaves."""
    return f"adk-pause:{run_id}"


def decision_checkpoint_id(approval_id: str) -> str:
    """The id of the checkpoint that records the decision on ``approval_id``."""
    return f"adk-decision:{approval_id}"


def confirmation_calls(event: Event) -> list[types.FunctionCall]:
    """The ``adk_request_confirmation`` calls of ``event``."""
    return [call for call in event.get_function_calls() if call.name == CONFIRMATION_CALL]


def pending_approval(run_id: str, call: types.FunctionCall, at: datetime) -> PendingApproval:
    """Our pending approval for one confirmation call of run ``run_id``.

    Its id is ``"<run id>:<confirmation call id>"``; its tool, call id and input are
    those of the call that asked for confirmation.
    """
    original: Any = (call.args or {}).get("originalFunctionCall") or {}
    return PendingApproval(
        approval_id=f"{run_id}:{call.id}",
        tool_name=str(original.get("name")),
        tool_call_id=str(original.get("id")),
        input=original.get("args"),
        requested_at=at,
    )


async def decide_approval(
    store: SessionStateStore,
    session_id: str,
    approval_id: str,
    *,
    confirmed: bool,
    payload: Any = None,
) -> ApprovalResolution:
    """Confirm or reject ``approval_id`` from any process: ``"resolved"`` for exactly one
    caller, ``"already-resolved"`` for every other (ADKF-5).

    ``session_id`` is the store's (:func:`~helix_agents.adk.session_key`). The first
    decision recorded is the one :func:`resume_message` sends; ``payload`` is the
    ``ToolConfirmation`` payload the tool reads. An unknown id is
    ``ApprovalNotFoundError`` and writes nothing.
    """
    return await record_decision(
        store,
        session_id,
        approval_id,
        checkpoint_id=decision_checkpoint_id(approval_id),
        decision={"confirmed": confirmed, "payload": payload},
    )


async def resume_message(store: SessionStateStore, session_id: str) -> types.Content:
    """The message that resumes the run paused for confirmations, every decision in it.

    Pass it to ``Runner.run_async(new_message=...)``, in any process: ADK resumes the
    paused invocation with one ``adk_request_confirmation`` response per approval (an
    approval resolved through the store alone is a rejection). A session whose current
    run awaits no approvals is a ``ValidationError``; undecided approvals are
    :class:`ApprovalsPendingError`. Nothing is written.
    """
    _, paused = await paused_run(store, session_id, pause_checkpoint_id, "approvals")
    asked = [a for a in cast(list[Any], paused.get("approvals") or []) if isinstance(a, str)]
    parts = []
    for approval_id in asked:
        decided = await store.get_checkpoint(session_id, decision_checkpoint_id(approval_id))
        state: Any = {} if decided is None else decided.state
        answer = {"confirmed": state.get("confirmed") is True, "payload": state.get("payload")}
        response = types.FunctionResponse(
            name=CONFIRMATION_CALL, id=approval_id.split(":", 1)[1], response=answer
        )
        parts.append(types.Part(function_response=response))
    return types.Content(role="user", parts=parts)
