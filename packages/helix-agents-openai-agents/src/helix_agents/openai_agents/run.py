"""``HelixRun``: one ``Runner.run`` as one run of the store (OAI-1..OAI-9).

Wired in with two arguments::

    async with HelixRun(store, "chat-1", user_id="u-1") as run:
        result = await Runner.run(agent, "Hello", session=run.session, run_config=run.run_config)
        await run.pause(result)  # records its approvals, if it stopped for any

See docs/integrations/openai-agents.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agents import RunConfig, RunResult, RunResultStreaming, RunState, Tool
from agents.run_config import CallModelData, ModelInputData

from helix_agents.core import (
    Checkpoint,
    MessageCommit,
    PendingApproval,
    RunSupersededError,
    ScopedStateDelta,
    SessionInfo,
    SessionStateStore,
    StartRun,
    ValidationError,
)
from helix_agents.core.adapters import claim_session, paused_run
from helix_agents.core.backend import check_id
from helix_agents.core.context import STRATEGIES, Budget, ContextStrategy, features
from helix_agents.core.models import Usage

from ._disclosure import Disclosure
from ._offload import Offloader
from ._usage import model_name, usage_by_model
from .approvals import (
    decision_checkpoint_id,
    pause_checkpoint_id,
    pending_approval,
)
from .session import ADAPTER, HelixSession
from .tools import context_tools

if TYPE_CHECKING:
    from typing import Self

    from agents import Agent
    from agents.items import TResponseInputItem

__all__ = ["DEFAULT_CONTEXT_WINDOW", "STRATEGY_KEY", "HelixRun"]

DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window (tokens) of the default budget."""
STRATEGY_KEY = "helix.context_strategy"
"""The key of the session's scoped state that keeps its context strategy."""


class HelixRun:
    """One run of the store around one ``Runner.run`` (or its resumption).

    Entering starts a new run of session ``session_id`` (creating the session,
    owned by ``user_id``), which supersedes the one before: from then on the older
    run's writes raise ``RunSupersededError``. :attr:`session` is a
    :class:`HelixSession` fenced by this run; :attr:`run_config` delivers queued
    context items and late answers before each model call. Leaving finishes the run
    (``completed``, ``failed`` or ``cancelled``) unless :meth:`pause` did.

    With ``resume=True`` the run takes over a run paused for approvals, once every
    one of them is decided (else :class:`ApprovalsPendingError`, before anything is
    written); :meth:`resume_state` then gives the ``RunState`` to run.

    ``strategy`` (``static``, ``hybrid``, ``dynamic``; default: the session's, else
    ``hybrid``) is kept with the session. Under ``hybrid`` and ``dynamic`` a tool output
    over ``budget.offload_tokens`` reaches the model as its offload summary (OAI-6),
    and :attr:`tools` (``read_tool_output``, ``recall_history``) go on the agent (OAI-7).
    Under ``dynamic``, the tools of ``tool_sources`` (source name -> tools) are in
    :attr:`tools` too, each enabled once the model activated its source with
    ``activate_tool_source``, which the catalog in the instructions offers (OAI-9).
    """

    def __init__(
        self,
        store: SessionStateStore,
        session_id: str,
        *,
        user_id: str | None = None,
        run_config: RunConfig | None = None,
        resume: bool = False,
        strategy: ContextStrategy | None = None,
        budget: Budget | None = None,
        tool_sources: Mapping[str, Sequence[Tool]] | None = None,
    ) -> None:
        self.session_id = check_id(session_id, "session_id")
        if user_id is not None:
            check_id(user_id, "user_id", session_id=session_id)
        self.store = store
        self.user_id = user_id
        self.run_id = f"oai-{uuid.uuid4().hex}"
        self.session = HelixSession(session_id, store, user_id=user_id, fence_run_id=self.run_id)
        self.run_config = dataclasses.replace(
            run_config or RunConfig(), call_model_input_filter=self._show_context
        )
        self.resume = resume
        if strategy is not None and strategy not in STRATEGIES:
            raise ValidationError(
                f"session {session_id!r}: strategy {strategy!r} is not one of {STRATEGIES}",
                session_id=session_id,
            )
        self.strategy: ContextStrategy = strategy or "hybrid"
        self._strategy_given = strategy is not None
        self.budget = budget or Budget(context_window=DEFAULT_CONTEXT_WINDOW)
        self.tools: list[Tool] = []
        """The context tools of the run's strategy, for the agent's ``tools``."""
        self._offloader: Offloader | None = None
        self._sources = dict(tool_sources or {})
        self._disclosure: Disclosure | None = None
        self.paused_run_id: str | None = None
        """The run this one resumes (``resume=True``)."""
        # What this run delivered, and where in the SDK's model input it belongs.
        self._shown: list[tuple[int, list[TResponseInputItem]]] = []
        self._finished = False
        self._paused: dict[str, Any] = {}
        # The model of each of this run's model calls, in order; how many were recorded.
        self._models: list[str] = []
        self._usage_recorded = 0

    async def __aenter__(self) -> Self:
        info = await claim_session(self.store, self.session_id, ADAPTER, user_id=self.user_id)
        if self.resume:
            await self._check_resumable(info)
        saved = await self.store.get_scoped_state("session", self.session_id)
        if not self._strategy_given and saved.get(STRATEGY_KEY) in STRATEGIES:
            self.strategy = saved[STRATEGY_KEY]  # type: ignore[assignment]
        # The run starts and the strategy is kept in one commit.
        keep = ScopedStateDelta(scope="session", changes={STRATEGY_KEY: self.strategy})
        await self.store.append_messages(
            self.session_id,
            MessageCommit(start_run=StartRun(run_id=self.run_id), scoped_state=(keep,)),
        )
        # The rows the SDK's compaction replaces stay searchable where history is preserved.
        self.session.archive_compacted = features(self.strategy).preserve_history
        if features(self.strategy).offload_outputs:
            self._offloader = Offloader(self.store, self.session_id, self.budget)
            self.tools = [*context_tools(self.store, self.session_id)]
        if features(self.strategy).lazy_tools and self._sources:
            self._disclosure = Disclosure(self.store, self.session_id, self.run_id, self._sources)
            await self._disclosure.replay()
            self.tools += self._disclosure.tools()
        else:
            self.tools += [tool for tools in self._sources.values() for tool in tools]
        return self

    async def _check_resumable(self, info: SessionInfo | None) -> None:
        self.paused_run_id, self._paused = await paused_run(
            self.store, self.session_id, pause_checkpoint_id, "approvals", info
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._finished or isinstance(exc, RunSupersededError):
            return
        status: Any = "completed"
        if isinstance(exc, asyncio.CancelledError):
            status = "cancelled"
        elif exc is not None:
            status = "failed"
        # Superseded meanwhile: a newer run owns the session, there is nothing of ours to end.
        with contextlib.suppress(RunSupersededError):
            await self.store.finish_run(self.session_id, self.run_id, status)
        self._finished = True

    async def _show_context(self, data: CallModelData[Any]) -> ModelInputData:
        """The SDK's model input with this run's context rows in it (OAI-1)."""
        self._models.append(model_name(self.run_config.model or data.agent.model))
        given = data.model_data.input
        delivered = await self.session.deliver_queued()
        if delivered:
            self._shown.append((len(given), delivered))
        shown: list[TResponseInputItem] = []
        start = 0
        for at, items in self._shown:
            shown += given[start:at]
            shown += items
            start = at
        shown += given[start:]
        if self._offloader is not None:
            shown = await self._offloader.shown(shown)
        instructions = data.model_data.instructions
        if self._disclosure is not None:
            instructions = self._disclosure.instructions(instructions)
        return ModelInputData(input=shown, instructions=instructions)

    async def record_usage(self, result: RunResult | RunResultStreaming) -> tuple[Usage, ...]:
        """Commit the token usage of this run's model calls in ``result`` not recorded yet,
        per model, to the session's usage (OAI-11); what it recorded.

        One commit (no rows, not fenced: the calls were made either way) whose id names
        the calls it covers, so a retry counts nothing twice.
        """
        # This run's calls are the result's last responses (a resumed run's result also
        # holds the paused run's, which that run recorded).
        ours = result.raw_responses[max(0, len(result.raw_responses) - len(self._models)) :]
        calls = list(zip(self._models[-len(ours) :] if ours else [], ours, strict=True))
        fresh = calls[self._usage_recorded :]
        if not fresh:
            return ()
        usage = usage_by_model(fresh)
        end = len(calls)
        await self.store.append_messages(
            self.session_id,
            MessageCommit(usage=usage, commit_id=f"{self.run_id}:usage:{end}"),
        )
        self._usage_recorded = end
        return usage

    async def pause(self, result: RunResult | RunResultStreaming) -> list[PendingApproval]:
        """Record the run's interruptions as pending approvals, with a checkpoint holding
        its ``RunState``, and finish it ``awaiting_approval`` (OAI-4).

        ``[]`` (and nothing written) when the run did not stop for approvals.
        """
        if not result.interruptions:
            return []
        now = datetime.now(UTC)
        approvals = [pending_approval(self.run_id, item, now) for item in result.interruptions]
        info = await self.store.get_session(self.session_id)
        checkpoint = Checkpoint(
            checkpoint_id=pause_checkpoint_id(self.run_id),
            run_id=self.run_id,
            message_count=0 if info is None else info.message_count,
            state={
                "run_state": result.to_state().to_json(),
                "approvals": [a.approval_id for a in approvals],
                "shown": [[at, items] for at, items in self._shown],
            },
            created_at=now,
        )
        await self.store.save_checkpoint(self.session_id, checkpoint, fence_run_id=self.run_id)
        await self.store.add_pending_approvals(self.session_id, approvals, fence_run_id=self.run_id)
        await self.store.finish_run(self.session_id, self.run_id, "awaiting_approval")
        self._finished = True
        return approvals

    async def resume_state(self, agent: Agent[Any]) -> RunState[Any]:
        """The ``RunState`` of the paused run (``resume=True``), every decision applied.

        A decision recorded by :func:`decide_approval` approves or rejects its call; an
        approval resolved through the store alone is a rejection.
        """
        if self.paused_run_id is None:
            raise ValidationError(
                f"session {self.session_id!r}: this HelixRun resumes nothing (resume=False)",
                session_id=self.session_id,
            )
        saved = self._paused
        state: RunState[Any] = await RunState.from_json(agent, saved["run_state"])
        decisions: dict[str, Any] = {}
        for approval_id in saved["approvals"]:
            decided = await self.store.get_checkpoint(
                self.session_id, decision_checkpoint_id(approval_id)
            )
            decisions[approval_id.split(":", 1)[1]] = None if decided is None else decided.state
        for item in state.get_interruptions():
            raw: Any = item.raw_item
            call_id = raw.get("call_id") if isinstance(raw, dict) else raw.call_id
            decision = decisions.get(str(call_id))
            if isinstance(decision, dict) and decision.get("approve") is True:
                state.approve(item)
            else:
                message = decision.get("message") if isinstance(decision, dict) else None
                state.reject(item, rejection_message=message)
        self._shown = [(int(at), list(items)) for at, items in saved["shown"]]
        return state
