"""``HelixFlowPersistence``: a CrewAI flow's state and pending human feedback in a session store.

A flow is a session (its id the flow's uuid, marked ``crewai``). Each ``save_state`` is an
insert-once checkpoint whose id sorts after the flow's earlier ones, so the latest state is
one read. A pending human feedback is one of our pending approvals beside a checkpoint
holding its context and state: any process lists it, decides it once, and resumes the
flow. See docs/integrations/crewai.md (CRW-1..CRW-7).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, date, datetime
from typing import Any, Self, TypeVar

from crewai.flow.async_feedback.types import PendingFeedbackContext
from crewai.flow.persistence.base import FlowPersistence
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from helix_agents.core import (
    Checkpoint,
    PendingApproval,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
    open_store,
)
from helix_agents.core.adapters import (
    ADAPTER_KEY,
    AdapterName,
    claim_session,
    readable,
    record_decision,
)
from helix_agents.core.inputs import check_id, check_json
from helix_agents.core.models import ApprovalResolution
from helix_agents.core.urls import redact_url

from ._loop import EventLoopError, LoopThread

__all__ = [
    "ADAPTER",
    "MAX_STATE_BYTES",
    "CorruptFlowStateError",
    "FlowStateError",
    "HelixFlowPersistence",
]

ADAPTER: AdapterName = "crewai"
"""The mark of the sessions ``HelixFlowPersistence`` creates (ADP-1)."""

MAX_STATE_BYTES = 64 * 1024 * 1024
"""The largest flow state (or feedback context) saved, in bytes of its JSON text."""

STATE_PREFIX = "crewai-state:"
FEEDBACK_PREFIX = "crewai-feedback:"
DECISION_PREFIX = "crewai-decision:"
_RUN_ID = "crewai-flow"
_T = TypeVar("_T")


class FlowStateError(ValidationError):
    """A flow id, state or feedback context that is not storable; nothing was written.

    ``session_id`` is the flow's uuid as given (code ``validation_error``).
    """


class CorruptFlowStateError(ValidationError):
    """A stored checkpoint of the flow that does not hold what this adapter wrote;
    ``checkpoint_id`` names it."""

    def __init__(
        self, message: str, *, session_id: str | None = None, checkpoint_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.checkpoint_id = checkpoint_id


def _json_default(obj: Any) -> Any:
    # As CrewAI's SQLiteFlowPersistence serialises what JSON has no type for.
    if isinstance(obj, BaseModel):
        try:
            return obj.model_dump(mode="json")
        except Exception:
            return obj.model_dump(mode="python")
    if isinstance(obj, set | tuple):
        return list(obj)
    if isinstance(obj, date | datetime):
        return obj.isoformat()
    return str(obj)


def _flow_id(flow_uuid: object) -> str:
    try:
        return check_id(flow_uuid, "flow_uuid")
    except ValidationError as exc:
        shown = flow_uuid if isinstance(flow_uuid, str) else None
        raise FlowStateError(exc.message, session_id=shown) from None


def _plain(flow: str, value: object, field: str) -> dict[str, Any]:
    """``value`` (a dict or a pydantic model) as the JSON object CrewAI's SQLite store
    would save, checked storable (CRW-2)."""
    if isinstance(value, BaseModel):
        model = value
        try:
            value = model.model_dump(mode="json")
        except Exception:
            value = model.model_dump(mode="python")
    if not isinstance(value, dict):
        raise FlowStateError(
            f"flow {flow!r}: {field} must be a dict or a pydantic model, "
            f"got {type(value).__name__}",
            session_id=flow,
        )
    try:
        text = json.dumps(value, default=_json_default)
    except (RecursionError, ValueError, TypeError) as exc:
        reason = "nests too deep" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise FlowStateError(
            f"flow {flow!r}: {field} is not JSON: {reason}", session_id=flow
        ) from None
    if len(text) > MAX_STATE_BYTES:  # ASCII (json.dumps escapes the rest): a byte a character
        raise FlowStateError(
            f"flow {flow!r}: {field} is {len(text)} bytes of JSON; at most {MAX_STATE_BYTES}",
            session_id=flow,
        )
    plain: dict[str, Any] = json.loads(text)
    try:
        # As stored: inside the checkpoint's object, one level deeper (MAX_JSON_DEPTH).
        check_json({field: plain}, "checkpoint", session_id=flow)
    except ValidationError as exc:
        raise FlowStateError(f"flow {flow!r}: {exc.message}", session_id=flow) from None
    return plain


class HelixFlowPersistence(FlowPersistence):
    """CrewAI's ``FlowPersistence`` on a helix-agents store: pass it to ``@persist(...)``,
    ``Flow(persistence=...)`` or ``Flow.from_pending(...)``.

    ``store_or_url`` is a store URL (``sqlite:///flows.db``, ``postgresql://…``) or a store
    not yet entered (``open_store(url, **options)``); either is opened on an event loop of
    the persistence's own and closed by :meth:`close`. The methods are synchronous, as
    CrewAI calls them, and safe from any thread, also one running an event loop (CRW-5).
    """

    persistence_type: str = Field(default="HelixFlowPersistence")
    store_url: str | None = Field(
        default=None, description="The store's URL, its password redacted (None for a store)."
    )
    user_id: str | None = Field(default=None, description="Owner of the sessions it creates.")

    _store: SessionStateStore | None = PrivateAttr(default=None)
    _loop: LoopThread | None = PrivateAttr(default=None)

    def __init__(
        self, store_or_url: SessionStateStore | str | None = None, /, **kwargs: Any
    ) -> None:
        if isinstance(store_or_url, str):
            kwargs["store_url"] = store_or_url
        elif (store_or_url is None) == (kwargs.get("store_url") is None):
            raise ValidationError("HelixFlowPersistence takes a store or a store URL, one of them")
        super().__init__(**kwargs)
        if store_or_url is not None and not isinstance(store_or_url, str):
            self._open(store_or_url)

    @model_validator(mode="after")
    def _open_url(self) -> Self:
        """Open the store of ``store_url`` (also for a persistence CrewAI rebuilds from a
        flow's JSON, which holds the redacted URL)."""
        check_id(self.user_id, "user_id", optional=True)
        if self.store_url is not None and self._store is None:
            url, self.store_url = self.store_url, redact_url(self.store_url)
            self._open(open_store(url))
        return self

    def _open(self, store: SessionStateStore) -> None:
        loop = LoopThread(f"HelixFlowPersistence-{id(self):x}")
        try:
            loop.call(_enter(store))
        except BaseException:
            loop.stop()
            raise
        self._store, self._loop = store, loop

    @property
    def store(self) -> SessionStateStore:
        """The store (its methods are coroutines of the persistence's own loop: :meth:`call`)."""
        return self._open_store()

    def _open_store(self) -> SessionStateStore:
        if self._store is None or self._loop is None or self._loop.stopped:
            raise EventLoopError("HelixFlowPersistence is closed")
        return self._store

    def close(self) -> None:
        """Close the store and stop the loop; idempotent."""
        if self._store is None or self._loop is None or self._loop.stopped:
            return
        try:
            self._loop.call(self._store.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, make: Callable[[SessionStateStore], Coroutine[Any, Any, _T]]) -> _T:
        """``make(store)`` run on the persistence's loop: the store's async API from sync
        code, e.g. ``p.call(lambda s: s.list_pending_approvals(flow_id))``."""
        store = self._open_store()
        assert self._loop is not None
        return self._loop.call(make(store))

    # FlowPersistence

    def init_db(self) -> None:
        """Nothing to do: the store creates its schema when opened."""

    def save_state(
        self, flow_uuid: str, method_name: str, state_data: dict[str, Any] | BaseModel
    ) -> None:
        """Save the flow's state after ``method_name``: a new checkpoint, the latest (CRW-1)."""
        flow = _flow_id(flow_uuid)
        method = _method(flow, method_name)
        state = _plain(flow, state_data, "state")
        self.call(lambda s: self._save_state(s, flow, method, state))

    def load_state(self, flow_uuid: str) -> dict[str, Any] | None:
        """The flow's latest state, or ``None`` (no flow, or another adapter's) (CRW-1)."""
        flow = _flow_id(flow_uuid)
        found = self.call(lambda s: self._latest(s, flow, STATE_PREFIX))
        if found is None:
            return None
        return _stored(flow, found)[0]

    def save_pending_feedback(
        self,
        flow_uuid: str,
        context: PendingFeedbackContext,
        state_data: dict[str, Any] | BaseModel,
    ) -> None:
        """Save the state and a pending feedback: a checkpoint with its context and state,
        and a pending approval any process lists and decides (CRW-3)."""
        flow = _flow_id(flow_uuid)
        method = _method(flow, context.method_name)
        state = _plain(flow, state_data, "state")
        asked = _plain(flow, context.to_dict(), "context")
        at = context.requested_at.astimezone(UTC)  # CrewAI's is naive local time
        self.call(lambda s: self._save_pending(s, flow, method, state, asked, at))

    def load_pending_feedback(
        self, flow_uuid: str
    ) -> tuple[dict[str, Any], PendingFeedbackContext] | None:
        """The state and context of the flow's pending feedback, or ``None`` (CRW-3)."""
        flow = _flow_id(flow_uuid)
        found = self.call(lambda s: self._latest(s, flow, FEEDBACK_PREFIX))
        if found is None:
            return None
        state, asked = _stored(flow, found)
        try:
            context = PendingFeedbackContext.from_dict(asked or {})
        except (KeyError, TypeError, ValueError) as exc:
            raise _corrupt(flow, found, f"its context is not CrewAI's: {exc!r}") from None
        return state, context

    def clear_pending_feedback(self, flow_uuid: str) -> None:
        """Drop the flow's pending feedback once the flow resumed; its approval is resolved
        if no one decided it (CRW-4)."""
        flow = _flow_id(flow_uuid)
        self.call(lambda s: self._clear(s, flow))

    # Pending feedback from any process (CRW-4)

    def pending_feedback(self, flow_uuid: str) -> list[PendingApproval]:
        """The flow's undecided feedback requests (one per pause), oldest first."""
        flow = _flow_id(flow_uuid)
        return list(self.call(lambda s: self._pending(s, flow)))

    def decide_feedback(
        self, flow_uuid: str, approval_id: str, feedback: str
    ) -> ApprovalResolution:
        """Record ``feedback`` for ``approval_id``: ``"resolved"`` for exactly one caller of
        any process, ``"already-resolved"`` for every other. An unknown id is
        ``ApprovalNotFoundError``; nothing is written then."""
        flow = _flow_id(flow_uuid)
        if not isinstance(feedback, str):
            raise FlowStateError(
                f"flow {flow!r}: feedback must be text, got {type(feedback).__name__}",
                session_id=flow,
            )
        resolution: ApprovalResolution = self.call(
            lambda s: record_decision(
                s,
                flow,
                approval_id,
                checkpoint_id=f"{DECISION_PREFIX}{approval_id}",
                decision={"feedback": feedback},
            )
        )
        return resolution

    def decided_feedback(self, flow_uuid: str) -> str | None:
        """The feedback decided for the flow's pending pause (pass it to ``flow.resume``),
        or ``None`` when none is pending or it is undecided."""
        flow = _flow_id(flow_uuid)
        return self.call(lambda s: self._decided(s, flow))

    def pending_flows(self) -> list[str]:
        """The ids of the flows of the store with an undecided feedback request."""
        return list(self.call(lambda s: self._pending_flows(s)))

    # On the loop

    async def _claim(self, store: SessionStateStore, flow: str) -> bool:
        return await claim_session(store, flow, ADAPTER, user_id=self.user_id) is not None

    async def _checkpoint(
        self, store: SessionStateStore, flow: str, prefix: str, state: dict[str, Any]
    ) -> str:
        while True:
            record = Checkpoint(
                checkpoint_id=_next_id(prefix),
                run_id=_RUN_ID,
                message_count=0,
                state=state,
                created_at=datetime.now(UTC),
            )
            # Insert-once: an id another process took at the same nanosecond is retried.
            if (await store.save_checkpoint(flow, record)).recorded:
                return record.checkpoint_id

    async def _save_state(
        self, store: SessionStateStore, flow: str, method: str, state: dict[str, Any]
    ) -> None:
        if await self._claim(store, flow):
            await self._checkpoint(store, flow, STATE_PREFIX, {"method": method, "state": state})

    async def _save_pending(
        self,
        store: SessionStateStore,
        flow: str,
        method: str,
        state: dict[str, Any],
        asked: dict[str, Any],
        at: datetime,
    ) -> None:
        if not await self._claim(store, flow):
            return
        await self._checkpoint(store, flow, STATE_PREFIX, {"method": method, "state": state})
        pending: dict[str, Any] = {"method": method, "state": state, "context": asked}
        approval_id = await self._checkpoint(store, flow, FEEDBACK_PREFIX, pending)
        approval = PendingApproval(
            approval_id=approval_id,
            tool_name="crewai.human_feedback",
            tool_call_id=method,
            input={"message": asked.get("message"), "method_output": asked.get("method_output")},
            requested_at=at,
        )
        await store.add_pending_approvals(flow, [approval])

    async def _latest(self, store: SessionStateStore, flow: str, prefix: str) -> Checkpoint | None:
        try:
            info, page = await asyncio.gather(
                store.get_session(flow),
                store.page_checkpoints(flow, prefix=prefix, limit=1),
            )
        except SessionNotFoundError:
            return None
        if info is None or not readable(info, ADAPTER) or not page:
            return None
        return page[0]

    async def _feedback_ids(self, store: SessionStateStore, flow: str) -> list[str]:
        ids: list[str] = []
        before: str | None = None
        while True:
            page = await store.page_checkpoints(
                flow, prefix=FEEDBACK_PREFIX, before=before, limit=100
            )
            ids.extend(c.checkpoint_id for c in page)
            if len(page) < 100:
                return ids
            before = page[-1].checkpoint_id

    async def _clear(self, store: SessionStateStore, flow: str) -> None:
        info = await store.get_session(flow)
        if info is None or not readable(info, ADAPTER):
            return
        ids = await self._feedback_ids(store, flow)
        pending = {a.approval_id for a in await store.list_pending_approvals(flow)}
        for approval_id in ids:
            if approval_id in pending:
                await store.resolve_approval(flow, approval_id)
        await store.delete_checkpoints(flow, ids)

    async def _pending(self, store: SessionStateStore, flow: str) -> list[PendingApproval]:
        info = await store.get_session(flow)
        if info is None or not readable(info, ADAPTER):
            return []
        approvals = await store.list_pending_approvals(flow)
        return [a for a in approvals if a.approval_id.startswith(FEEDBACK_PREFIX)]

    async def _decided(self, store: SessionStateStore, flow: str) -> str | None:
        latest = await self._latest(store, flow, FEEDBACK_PREFIX)
        if latest is None:
            return None
        decided = await store.get_checkpoint(flow, f"{DECISION_PREFIX}{latest.checkpoint_id}")
        if decided is None:
            return None
        feedback = decided.state.get("feedback") if isinstance(decided.state, dict) else None
        if not isinstance(feedback, str):
            raise _corrupt(flow, decided, "it holds no feedback text")
        return feedback

    async def _pending_flows(self, store: SessionStateStore) -> list[str]:
        flows: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list_all_sessions(
                first=500, cursor=cursor, metadata={ADAPTER_KEY: ADAPTER}
            )
            for listed in page.sessions:
                if await self._pending(store, listed.id):
                    flows.append(listed.id)
            if page.next_cursor is None:
                return flows
            cursor = page.next_cursor


_last_id = 0
_id_guard = threading.Lock()


def _next_id(prefix: str) -> str:
    """Wall-clock nanoseconds, strictly increasing within the process: ids sort by save."""
    global _last_id
    with _id_guard:
        _last_id = max(time.time_ns(), _last_id + 1)
        return f"{prefix}{_last_id:020d}"


async def _enter(store: SessionStateStore) -> None:
    await store.__aenter__()


def _method(flow: str, method_name: object) -> str:
    if not isinstance(method_name, str):
        raise FlowStateError(
            f"flow {flow!r}: method_name must be text, got {type(method_name).__name__}",
            session_id=flow,
        )
    return method_name


def _corrupt(flow: str, found: Checkpoint, why: str) -> CorruptFlowStateError:
    return CorruptFlowStateError(
        f"flow {flow!r}: checkpoint {found.checkpoint_id!r} is not a CrewAI flow state: {why}",
        session_id=flow,
        checkpoint_id=found.checkpoint_id,
    )


def _stored(flow: str, found: Checkpoint) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The state (and the feedback context, if any) a checkpoint of ours holds (CRW-6)."""
    held = found.state
    state = held.get("state") if isinstance(held, dict) else None
    if not isinstance(held, dict) or not isinstance(state, dict):
        raise _corrupt(flow, found, "no state object in it")
    context = held.get("context")
    if found.checkpoint_id.startswith(FEEDBACK_PREFIX) and not isinstance(context, dict):
        raise _corrupt(flow, found, "no feedback context in it")
    return state, context if isinstance(context, dict) else None
