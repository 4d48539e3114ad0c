"""``HelixPlugin``: each ``Runner.run_async`` one run of the store (ADKF-1..ADKF-9).

Wired in with ADK's own extension points, a plugin of the app and a session service::

    plugin = HelixPlugin(store)
    app = App(name="travel", root_agent=agent, plugins=[plugin])
    runner = Runner(app=app, session_service=plugin.session_service)

See docs/integrations/adk.md.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from helix_agents.core import (
    Checkpoint,
    ContextMessage,
    MessageCommit,
    MessageCountConflictError,
    RunSupersededError,
    ScopedStateDelta,
    SessionStateStore,
    StartRun,
    ValidationError,
)
from helix_agents.core.context import (
    STRATEGIES,
    Budget,
    ContextStore,
    ContextStrategy,
    features,
    offload_output,
)
from helix_agents.core.runtime import delivery_commit

from ._context import context_event
from ._disclosure import Disclosure, ToolLike, hide
from ._runs import Run, Runs, RunSessionService, session_key
from .approvals import confirmation_calls, pause_checkpoint_id, pending_approval
from .service import _marker, _set_marker
from .tools import context_tools

__all__ = ["DEFAULT_CONTEXT_WINDOW", "STRATEGY_KEY", "HelixPlugin"]

DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window (tokens) of the default budget."""
STRATEGY_KEY = "helix.context_strategy"
"""The key of the session's scoped state that keeps its context strategy."""


class HelixPlugin(BasePlugin):
    """Brings the store's runs to ADK's ``Runner``: context items, fencing, late answers,
    approvals, and the context strategies.

    Give the app the plugin and the runner :attr:`session_service` (a
    ``HelixSessionService`` whose events are fenced by the plugin's runs). Each
    ``run_async`` invocation starts a run of the store before its user event is stored,
    superseding the session's run before it; it ends ``completed``, ``failed``, or
    ``awaiting_approval`` when it stopped on tool confirmations (recorded as pending
    approvals).

    ``strategy`` (``static``, ``hybrid``, ``dynamic``; default: the session's, else
    ``hybrid``) is kept with the session. Under ``hybrid`` and ``dynamic`` a tool result
    over ``budget.offload_tokens`` is stored and replaced by its offload summary, and
    :attr:`tools` (``read_tool_output``, ``recall_history``) go on the agent. Under
    ``dynamic``, the tools of ``tool_sources`` (source name -> tools) are offered once the
    model activated their source with ``activate_tool_source``, which the catalog at the
    end of the instructions offers (ADKF-9); under the others, all of them.
    """

    def __init__(
        self,
        store: SessionStateStore,
        *,
        strategy: ContextStrategy | None = None,
        budget: Budget | None = None,
        tool_sources: Mapping[str, Sequence[ToolLike]] | None = None,
        name: str = "helix",
    ) -> None:
        super().__init__(name)
        if strategy is not None and strategy not in STRATEGIES:
            raise ValidationError(f"strategy {strategy!r} is not one of {STRATEGIES}")
        self.store = store
        self.strategy = strategy
        self.budget = budget or Budget(context_window=DEFAULT_CONTEXT_WINDOW)
        self.runs = Runs()
        self.session_service = RunSessionService(store, self.runs)
        """The session service to give the runner: its events are fenced by the runs."""
        self._disclosure = Disclosure(store, self.runs, tool_sources) if tool_sources else None
        context = context_tools(store)
        self._context_tools = {tool.name for tool in context}
        self.tools: list[BaseTool] = [*context]
        """The tools to put on the agent: ``read_tool_output``, ``recall_history``, and the
        tool sources' tools with ``activate_tool_source``; each request offers those its
        run's strategy allows."""
        if self._disclosure is not None:
            self.tools += self._disclosure.tools()

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """Start the invocation's run before its user event is stored."""
        await self._start(invocation_context)
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        """Start the invocation's run, if it came without a user message."""
        await self._start(invocation_context)
        return None

    async def _start(self, ic: InvocationContext) -> None:
        session = ic.session
        if self.runs.of(session) is not None:
            return
        sid = session_key(session.app_name, session.user_id, session.id)
        strategy = self.strategy
        if strategy is None:
            saved = (await self.store.get_scoped_state("session", sid)).get(STRATEGY_KEY)
            strategy = saved if saved in STRATEGIES else "hybrid"
        run = Run(run_id=f"adk-{uuid.uuid4().hex}", sid=sid, strategy=strategy)
        if self._disclosure is not None and features(strategy).lazy_tools:
            run.active_sources = await self._disclosure.replay(sid)
        # The run starts and the strategy is kept in one commit (no row: the session
        # object's row count stays right).
        keep = ScopedStateDelta(scope="session", changes={STRATEGY_KEY: strategy})
        await self.store.append_messages(
            sid, MessageCommit(start_run=StartRun(run_id=run.run_id), scoped_state=(keep,))
        )
        self.runs.start(session, run)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Deliver the queued context items and late answers, in one commit, into the
        request and the session (ADKF-1)."""
        session = callback_context.session
        run = self.runs.of(session)
        if run is None:
            return None
        self._gate(run, llm_request)
        expected = _marker(session)
        commit = None
        if expected is not None:
            commit = await delivery_commit(
                self.store, run.sid, fence_run_id=run.run_id, expected=expected
            )
        if commit is not None:
            try:
                result = await self.store.append_messages(run.sid, commit)
            except MessageCountConflictError:
                # Another writer moved the log: the items stay queued for the next call.
                return None
            for offset, row in enumerate(commit.messages):
                if not isinstance(row, ContextMessage):  # every row of a delivery is one
                    continue
                index = result.first_index + offset
                event = context_event(row, index, callback_context.invocation_id)
                session.events.append(event)
                if event.content is not None:
                    llm_request.contents.append(event.content)
            _set_marker(session, result.message_count)
        return None

    def _gate(self, run: Run, request: LlmRequest) -> None:
        """Offer only the tools the run's strategy allows (ADKF-7, ADKF-9)."""
        if not features(run.strategy).offload_outputs:
            hide(request, self._context_tools)
        if self._disclosure is not None:
            lazy = features(run.strategy).lazy_tools
            self._disclosure.gate(request, run.active_sources if lazy else None)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """A result over the budget, stored and replaced by its offload summary (ADKF-6)."""
        run = self.runs.of(tool_context.session)
        if run is None or not features(run.strategy).offload_outputs:
            return None
        value = result.get("result") if list(result) == ["result"] else result
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        summary = await offload_output(
            cast(ContextStore, self.store),
            run.sid,
            text,
            budget=self.budget,
            tool_name=tool.name,
            key=f"adk-output:{tool_context.function_call_id}",
        )
        return None if summary is text else {"result": summary}

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """Note the run's tool confirmations, recorded when it ends (ADKF-4)."""
        run = self.runs.of(invocation_context.session)
        if run is not None:
            run.confirmations += confirmation_calls(event)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """End the run: ``awaiting_approval`` with its approvals, else ``completed``."""
        run = self.runs.end(invocation_context.session)
        if run is None:
            return
        with contextlib.suppress(RunSupersededError):
            if run.confirmations:
                await self._pause(run, invocation_context)
            else:
                await self.store.finish_run(run.sid, run.run_id, "completed")

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        """End the run ``failed`` (a superseded run has nothing of its own to end)."""
        run = self.runs.end(invocation_context.session)
        if run is not None and not isinstance(error, RunSupersededError):
            with contextlib.suppress(RunSupersededError):
                await self.store.finish_run(run.sid, run.run_id, "failed")

    async def _pause(self, run: Run, ic: InvocationContext) -> None:
        now = datetime.now(UTC)
        approvals = [pending_approval(run.run_id, call, now) for call in run.confirmations]
        checkpoint = Checkpoint(
            checkpoint_id=pause_checkpoint_id(run.run_id),
            run_id=run.run_id,
            message_count=_marker(ic.session) or 0,
            state={
                "invocation_id": ic.invocation_id,
                "approvals": [a.approval_id for a in approvals],
            },
            created_at=now,
        )
        await self.store.save_checkpoint(run.sid, checkpoint, fence_run_id=run.run_id)
        await self.store.add_pending_approvals(run.sid, approvals, fence_run_id=run.run_id)
        await self.store.finish_run(run.sid, run.run_id, "awaiting_approval")
