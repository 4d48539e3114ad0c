"""LangGraph's ``interrupt()`` pauses as the store's pending approvals (LGF-5, LGF-6).

A run that stopped on interrupts leaves one checkpoint (:func:`pause_checkpoint_id`)
naming its approvals and the interrupt each answers, and one pending approval per
interrupt. Any process lists them (``store.list_pending_approvals``) and answers one
with :func:`decide_approval`; the graph resumes in any process with
:meth:`HelixGraphRun.resume_command`. See docs/integrations/langgraph.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from helix_agents.core import PendingApproval, SessionStateStore
from helix_agents.core.adapters import ApprovalsPendingError, record_decision
from helix_agents.core.inputs import check_id, check_json
from helix_agents.core.models import ApprovalResolution

if TYPE_CHECKING:
    from langgraph.types import Interrupt

__all__ = [
    "ApprovalsPendingError",
    "decide_approval",
    "decision_checkpoint_id",
    "pause_checkpoint_id",
    "pending_approval",
]

_INTERRUPT = "interrupt"


def pause_checkpoint_id(run_id: str) -> str:
    """The id of the checkpoint a run paused on interrupts leaves."""
    return f"lg-pause:{run_id}"


def decision_checkpoint_id(approval_id: str) -> str:
    """The id of the checkpoint that records the answer to ``approval_id``."""
    return f"lg-decision:{approval_id}"


def pending_approval(
    session_id: str, run_id: str, interrupt: Interrupt, at: datetime
) -> PendingApproval:
    """Our pending approval for one interrupt of run ``run_id``.

    An interrupt value that is a dict naming ``tool`` (and ``tool_call_id``) gives the
    approval its tool; the whole value is its ``input``, which must be JSON
    (``ValidationError`` naming the session otherwise).
    """
    value: Any = check_json(interrupt.value, "interrupt value", session_id=session_id)
    fields = value if isinstance(value, dict) else {}
    tool = fields.get("tool")
    call_id = fields.get("tool_call_id")
    return PendingApproval(
        approval_id=f"{run_id}:{interrupt.id}",
        tool_name=tool if isinstance(tool, str) else _INTERRUPT,
        tool_call_id=call_id if isinstance(call_id, str) else interrupt.id,
        input=value,
        requested_at=at,
    )


async def decide_approval(
    store: SessionStateStore, session_id: str, approval_id: str, answer: JsonValue
) -> ApprovalResolution:
    """Answer ``approval_id`` from any process: ``"resolved"`` for exactly one caller,
    ``"already-resolved"`` for every other (LGF-6).

    The first answer recorded is what the paused ``interrupt()`` returns when the graph
    resumes; it must be JSON. An unknown id is ``ApprovalNotFoundError``, an answer that
    is not JSON a ``ValidationError``, and neither writes anything.
    """
    check_id(approval_id, "approval_id", session_id=session_id)
    check_json(answer, "answer", session_id=session_id)
    return await record_decision(
        store,
        session_id,
        approval_id,
        checkpoint_id=decision_checkpoint_id(approval_id),
        decision={"answer": answer},
    )
