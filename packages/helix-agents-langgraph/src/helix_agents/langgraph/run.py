"""``HelixGraphRun``: one graph invocation on a thread as one run of the store (LGF-1..LGF-12,
LGF-14).

Wired in with the run's config and one node before the model::

    builder.add_node("context", helix_context)  # then the model node, then ToolNode
    graph = builder.compile(checkpointer=HelixCheckpointSaver(store))
    async with HelixGraphRun(store, "thread-1") as run:
        await graph.ainvoke({"messages": [("user", "hi")]}, run.config)
        await run.pause(graph)  # records its interrupts as approvals, if it stopped on any

See docs/integrations/langgraph.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

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
from helix_agents.core.context import (
    STRATEGIES,
    Budget,
    ContextStore,
    ContextStrategy,
    Disclosure,
    features,
)
from helix_agents.core.inputs import check_id
from helix_agents.core.models import Usage
from helix_agents.core.rules import assert_fence

from ._archive import archive, trim_point
from ._context import deliver_queued, row_messages
from ._fence import RUN_ID_KEY, RUN_KEY, run_of
from ._offload import offloaded
from ._threads import ADAPTER
from ._usage import UsageCollector, usage_by_model
from .approvals import (
    decision_checkpoint_id,
    pause_checkpoint_id,
    pending_approval,
)
from .tools import activate_tool_source, read_tool_output, recall_history

if TYPE_CHECKING:
    from typing import Self

    from langgraph.pregel import Pregel
    from langgraph.types import Command

__all__ = ["CONTEXT_TOOLS", "STRATEGY_KEY", "HelixGraphRun", "helix_context", "helix_run"]

DEFAULT_CONTEXT_WINDOW = 128_000
STRATEGY_KEY = "helix.context_strategy"
"""The key of the session's scoped state that keeps its context strategy."""
CONTEXT_TOOLS: tuple[BaseTool, ...] = (read_tool_output, recall_history, activate_tool_source)
"""The run's own tools, for the graph's ``ToolNode`` (the model is offered them per run)."""


class HelixGraphRun:
    """One run of the store around one graph invocation (or its resumption) on a thread.

    Entering starts a new run of session ``thread_id`` (creating it, marked as LangGraph's),
    which supersedes the one before: from then on every write of the older run — its
    checkpoints and deliveries — raises ``RunSupersededError``. :attr:`config` is what the
    graph is invoked with; :func:`helix_context`, a node before the model, delivers the
    queued context items and late answers and applies the strategy. Leaving finishes the
    run (``completed``, ``failed`` or ``cancelled``) unless :meth:`pause` did.

    With ``resume=True`` the run takes over a run paused on interrupts, once every one of
    them is answered (else :class:`ApprovalsPendingError`, before anything is written);
    :meth:`resume_command` then gives the ``Command`` to invoke the graph with.

    ``strategy`` (``static``, ``hybrid``, ``dynamic``; default: the session's, else
    ``hybrid``) is kept with the session. ``keep_messages`` trims the state to about that
    many messages before each model call, archiving the rest first (LGF-9); under
    ``dynamic`` the tools of ``tool_sources`` are offered once activated (LGF-10).
    """

    def __init__(
        self,
        store: SessionStateStore,
        thread_id: str,
        *,
        user_id: str | None = None,
        resume: bool = False,
        strategy: ContextStrategy | None = None,
        budget: Budget | None = None,
        keep_messages: int | None = None,
        tool_sources: Mapping[str, Sequence[BaseTool]] | None = None,
    ) -> None:
        self.session_id = check_id(thread_id, "thread_id")
        if user_id is not None:
            check_id(user_id, "user_id", session_id=thread_id)
        if strategy is not None and strategy not in STRATEGIES:
            raise ValidationError(
                f"session {thread_id!r}: strategy {strategy!r} is not one of {STRATEGIES}",
                session_id=thread_id,
            )
        if keep_messages is not None and (
            type(keep_messages) is not int or keep_messages < 1  # a bool is not a count
        ):
            raise ValidationError(
                f"session {thread_id!r}: keep_messages {keep_messages!r} is not a positive int",
                session_id=thread_id,
            )
        self.store = store
        self.user_id = user_id
        self.run_id = f"lg-{uuid.uuid4().hex}"
        self.resume = resume
        self.strategy: ContextStrategy = strategy or "hybrid"
        self._strategy_given = strategy is not None
        self.budget = budget or Budget(context_window=DEFAULT_CONTEXT_WINDOW)
        self.keep_messages = keep_messages
        self._sources = {name: list(tools) for name, tools in (tool_sources or {}).items()}
        self._disclosure: Disclosure[BaseTool] | None = None
        self.paused_run_id: str | None = None
        """The run this one resumes (``resume=True``)."""
        self._paused: dict[str, Any] = {}
        self._reconciled = False
        self._finished = False
        self._archived: set[str] = set()  # ids of the messages this run archived
        self._usage = UsageCollector()
        self._usage_recorded = 0

    @property
    def config(self) -> RunnableConfig:
        """The config to invoke the graph with: the thread, the run that fences its writes
        (``configurable["helix_run_id"]``) and this object, and the callback that collects
        the usage of the graph's chat model calls (LGF-14)."""
        return {
            "configurable": {"thread_id": self.session_id, RUN_ID_KEY: self.run_id, RUN_KEY: self},
            "callbacks": [self._usage],
        }

    async def __aenter__(self) -> Self:
        info = await claim_session(self.store, self.session_id, ADAPTER, user_id=self.user_id)
        if self.resume:
            await self._check_resumable(info)
        saved = await self.store.get_scoped_state("session", self.session_id)
        if not self._strategy_given and saved.get(STRATEGY_KEY) in STRATEGIES:
            self.strategy = cast(ContextStrategy, saved[STRATEGY_KEY])
        # The run starts and the strategy is kept in one commit.
        keep = ScopedStateDelta(scope="session", changes={STRATEGY_KEY: self.strategy})
        await self.store.append_messages(
            self.session_id,
            MessageCommit(start_run=StartRun(run_id=self.run_id), scoped_state=(keep,)),
        )
        if features(self.strategy).lazy_tools and self._sources:
            self._disclosure = Disclosure(
                self.store, self.session_id, self.run_id, self._sources, lambda t: t.name
            )
            await self._disclosure.replay()
        return self

    async def _check_resumable(self, info: SessionInfo | None) -> None:
        self.paused_run_id, state = await paused_run(
            self.store, self.session_id, pause_checkpoint_id, "interrupts", info
        )
        self._paused = cast(dict[str, str], state.get("interrupts") or {})

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._finished:
            return
        await self.record_usage()
        if isinstance(exc, RunSupersededError):
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

    async def record_usage(self) -> tuple[Usage, ...]:
        """Commit the token usage of the run's chat model calls not recorded yet, per model,
        to the session's usage (LGF-14); what it recorded. Leaving the run and
        :meth:`pause` call it.

        One commit (no rows, not fenced: the calls were made either way) whose id names the
        calls it covers, so a retry counts nothing twice.
        """
        calls = self._usage.calls
        end = len(calls)
        if end == self._usage_recorded:
            return ()
        usage = usage_by_model(calls[self._usage_recorded : end])
        await self.store.append_messages(
            self.session_id,
            MessageCommit(usage=usage, commit_id=f"{self.run_id}:usage:{end}"),
        )
        self._usage_recorded = end
        return usage

    @property
    def tools(self) -> list[BaseTool]:
        """The tools to offer the model on its next call: the context tools of the strategy
        and the tool sources (under ``dynamic``, the active ones and the activation tool)."""
        offered: list[BaseTool] = []
        if features(self.strategy).offload_outputs:
            offered += [read_tool_output, recall_history]
        if self._disclosure is None:
            return offered + [tool for tools in self._sources.values() for tool in tools]
        offered += self._disclosure.offered()
        if self._disclosure.pending():
            offered.append(activate_tool_source)
        return offered

    def instructions(self, given: str = "") -> str:
        """``given`` with, under ``dynamic``, the catalog of the inactive tool sources."""
        return given if self._disclosure is None else self._disclosure.instructions(given)

    async def activate(self, source_name: str) -> str:
        """What ``activate_tool_source`` answers: the source's tools are offered from the
        next model call on."""
        if self._disclosure is None:
            return f"[error validation_error: no tool source is disclosed under {self.strategy}]"
        return await self._disclosure.activate(source_name)

    async def context_update(self, messages: Sequence[AnyMessage]) -> list[BaseMessage]:
        """The update of the state's ``messages`` before a model call (LGF-1, LGF-2, LGF-7,
        LGF-9): trimmed messages removed (archived first), the context rows the state
        misses, the rows delivered now, large tool outputs as their summaries.

        ``RunSupersededError`` when this run is no longer the thread's live run (LGF-3).
        """
        info = await self.store.get_session(self.session_id)
        # A superseded run stops here, before its next model call: its writes would fail.
        assert_fence(self.session_id, self.run_id, None if info is None else info.current_run)
        count = None if info is None else info.message_count
        update: list[BaseMessage] = []
        if self.keep_messages is not None:
            cut = trim_point(messages, self.keep_messages)
            if cut:
                trimmed = messages[:cut]
                await archive(self.store, self.session_id, self.run_id, self.strategy, trimmed)
                self._archived.update(m.id for m in trimmed if m.id is not None)
                update += [RemoveMessage(id=m.id) for m in trimmed if m.id is not None]
                messages = messages[cut:]
                count = None
        if not self._reconciled:
            # Rows delivered by a run that died before its state was saved (LGF-2).
            window = await cast(ContextStore, self.store).get_window(self.session_id)
            shown = {m.id for m in messages}
            update += [m for m in row_messages(window.messages, window.start) if m.id not in shown]
            self._reconciled = True
        update += await deliver_queued(self.store, self.session_id, self.run_id, count)
        if features(self.strategy).offload_outputs:
            update += await offloaded(self.store, self.session_id, self.budget, messages)
        return update

    async def archive_removed(
        self,
        writes: Sequence[tuple[str, Any]],
        values: Callable[[], Awaitable[Mapping[str, Any]]],
    ) -> None:
        """Archive, as LGF-9 does, the messages a node's ``writes`` remove with
        ``RemoveMessage`` (LGF-12); ``values`` reads the channels the node started from.
        The saver calls it before it stores the writes."""
        removed: dict[str, set[str]] = {}
        for channel, value in writes:
            for message in value if isinstance(value, list) else [value]:
                if isinstance(message, RemoveMessage) and message.id is not None:
                    removed.setdefault(channel, set()).add(message.id)
        if not removed:
            return
        # langgraph itself, not only langgraph-checkpoint: a graph is running.
        from langgraph.graph.message import REMOVE_ALL_MESSAGES

        before = await values()
        gone = [
            m
            for channel, ids in removed.items()
            for m in _listed(before.get(channel))
            if isinstance(m, BaseMessage)
            and m.id not in self._archived
            and (m.id in ids or REMOVE_ALL_MESSAGES in ids)
        ]
        if gone:
            await archive(self.store, self.session_id, self.run_id, self.strategy, gone)
            self._archived.update(m.id for m in gone if m.id is not None)

    async def pause(self, graph: Pregel[Any, Any, Any, Any]) -> list[PendingApproval]:
        """Record the interrupts the graph stopped on as pending approvals, with a checkpoint
        naming them, and finish the run ``awaiting_approval`` (LGF-5).

        ``[]`` (and nothing written) when the graph did not stop on interrupts.
        """
        snapshot = await graph.aget_state(self.config)
        if not snapshot.interrupts:
            return []
        now = datetime.now(UTC)
        interrupts = snapshot.interrupts
        approvals = [pending_approval(self.session_id, self.run_id, i, now) for i in interrupts]
        asked = {a.approval_id: i.id for a, i in zip(approvals, interrupts, strict=True)}
        checkpoint = Checkpoint(
            checkpoint_id=pause_checkpoint_id(self.run_id),
            run_id=self.run_id,
            message_count=0,
            state={"interrupts": asked},
            created_at=now,
        )
        await self.store.save_checkpoint(self.session_id, checkpoint, fence_run_id=self.run_id)
        await self.store.add_pending_approvals(self.session_id, approvals, fence_run_id=self.run_id)
        await self.record_usage()
        await self.store.finish_run(self.session_id, self.run_id, "awaiting_approval")
        self._finished = True
        return approvals

    async def resume_command(self) -> Command[Any]:
        """The ``Command`` that resumes the paused run (``resume=True``): each interrupt
        gets the answer :func:`decide_approval` recorded (``None`` for an approval resolved
        through the store alone)."""
        if self.paused_run_id is None:
            raise ValidationError(
                f"session {self.session_id!r}: this HelixGraphRun resumes nothing (resume=False)",
                session_id=self.session_id,
            )
        answers: dict[str, Any] = {}
        for approval_id, interrupt_id in self._paused.items():
            decided = await self.store.get_checkpoint(
                self.session_id, decision_checkpoint_id(approval_id)
            )
            state = None if decided is None else decided.state
            answers[interrupt_id] = state.get("answer") if isinstance(state, dict) else None
        # Imported here: the graph API is langgraph's, which the saver alone does not need.
        from langgraph.types import Command

        return Command(resume=answers)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def helix_run(config: RunnableConfig) -> HelixGraphRun:
    """The :class:`HelixGraphRun` a node's ``config`` carries (``ValidationError`` if none)."""
    run = run_of(config)
    if not isinstance(run, HelixGraphRun):
        raise ValidationError(f"configurable[{RUN_KEY!r}] is not a HelixGraphRun")
    return run


async def helix_context(state: Any, config: RunnableConfig) -> dict[str, Any]:
    """The node to put before the model: the update of the state's ``messages`` (a state
    with a ``messages`` channel under ``add_messages``, such as ``MessagesState``) that
    ``HelixGraphRun.context_update`` makes."""
    return {"messages": await helix_run(config).context_update(state["messages"])}
