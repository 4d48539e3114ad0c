"""The SDK's tool approvals as the store's pending approvals (OAI-4, OAI-5).

A paused run leaves one checkpoint (:func:`pause_checkpoint_id`) holding the
serialized ``RunState``, and one pending approval per interruption. Any process
lists them (``store.list_pending_approvals``) and decides one with
:func:`decide_approval`; the run resumes in any process through
:meth:`HelixRun.resume_state`. See docs/integrations/openai-agents.md.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from helix_agents.core import (
    PendingApproval,
    SessionStateStore,
)
from helix_agents.core.adapters import ApprovalsPendingError, record_decision
from helix_agents.core.models import ApprovalResolution

if TYPE_CHECKING:
    from agents.items import ToolApprovalItem

__all__ = [
    "ApprovalsPendingError",
    "decide_approval",
    "decision_checkpoint_id",
    "pause_checkpoint_id",
]


def pause_checkpoint_id(run_id: str) -> str:
    """The id of the checkpoint a run paused for approvals leaves."""
    return f"oai-pause:{run_id}"


def decision_checkpoint_id(approval_id: str) -> str:
    """The id of the checkpoint that records the decision on ``approval_id``."""
    return f"oai-decision:{approval_id}"


def pending_approval(run_id: str, item: ToolApprovalItem, at: datetime) -> PendingApproval:
    """Our pending approval for one SDK interruption of run ``run_id``."""
    raw: Any = item.raw_item
    call_id = str(_field(raw, "call_id") or _field(raw, "id"))
    arguments = _field(raw, "arguments")
    try:
        tool_input = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        tool_input = arguments
    return PendingApproval(
        approval_id=f"{run_id}:{call_id}",
        tool_name=item.tool_name or str(_field(raw, "name")),
        tool_call_id=call_id,
        input=tool_input,
        requested_at=at,
    )


def _field(raw: Any, name: str) -> Any:
    """A field of an interruption's raw item, a dict or a model of the SDK."""
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


async def decide_approval(
    store: SessionStateStore,
    session_id: str,
    approval_id: str,
    *,
    approve: bool,
    message: str | None = None,
) -> ApprovalResolution:
    """Approve or reject ``approval_id`` from any process: ``"resolved"`` for exactly one
    caller, ``"already-resolved"`` for every other (OAI-5).

    The first decision recorded is the one the resumed run applies; ``message`` is
    what the model reads for a rejection. An unknown id is ``ApprovalNotFoundError``
    and writes nothing.
    """
    return await record_decision(
        store,
        session_id,
        approval_id,
        checkpoint_id=decision_checkpoint_id(approval_id),
        decision={"approve": approve, "message": message},
    )
