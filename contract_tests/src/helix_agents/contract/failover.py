"""A workload to run across a failover, and the invariants it must keep (docs/scaling.md, FO-5..8).

Concurrent commits (each with a ``commit_id``, some delivering a context item)
and approval resolutions run against a store while ``fail_over`` kills the
primary and a standby takes over. Every call is retried with the same arguments
while it raises a retryable error. :class:`Outcome` then reads the store back
and reports what broke: a lost acknowledged commit, a row or a delivery twice,
an approval resolved twice, an error that was not a core error, a
``may_have_landed=False`` on a write that had landed.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from helix_agents.core import (
    ChatMessage,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    MessageCommit,
    PendingApproval,
    SessionStateStore,
    StateStoreError,
    StoredContextItem,
    StoreUnavailableError,
)
from helix_agents.core.clock import utcnow

__all__ = ["Outcome", "Workload", "append_after_failover", "run_across_failover"]

T = TypeVar("T")


@dataclass
class Workload:
    """How much to run: sessions, commit workers per session, approvals and items per session."""

    sessions: int = 4
    writers: int = 2
    approvals: int = 6
    items: int = 6
    retry_for: float = 30.0


@dataclass
class Outcome:
    """What the workload saw, and what it read back afterwards."""

    acked: dict[str, set[str]] = field(default_factory=dict)
    resolved: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    delivered_twice: list[str] = field(default_factory=list)
    resolved_twice: list[str] = field(default_factory=list)

    def broken(self, *, durable: bool) -> list[str]:
        """Every broken invariant; lost commits and double resolutions count only if ``durable``
        (without the durability option they are measured, not forbidden)."""
        found = [*self.wrong, *self.twice, *self.delivered_twice]
        if durable:
            found += self.lost + self.resolved_twice
        return found


async def _retrying(call: Callable[[], Awaitable[T]], outcome: Outcome, deadline: float) -> T:
    """``call()`` until it returns; each error must be a core error, retried while retryable."""
    while True:
        try:
            return await call()
        except StateStoreError as exc:
            outcome.errors[exc.code if exc.retryable else type(exc).__name__] += 1
            if not exc.retryable or time.monotonic() > deadline:
                raise
        except Exception as exc:  # not a core error: an invariant broken
            outcome.wrong.append(f"{type(exc).__name__} is not a core error: {exc}")
            raise
        await asyncio.sleep(0.05)


async def _writer(
    store: SessionStateStore,
    session_id: str,
    name: str,
    items: list[str],
    outcome: Outcome,
    stop: asyncio.Event,
    deadline: float,
) -> None:
    number = 0
    while not stop.is_set():
        await asyncio.sleep(0)  # a store that never waits on I/O would starve the others
        number += 1
        commit_id = f"{name}-{number}"
        rows: list[Any] = [ChatMessage(role="user", content=commit_id)]
        deliveries: tuple[ContextItemDelivery, ...] = ()
        if number % 3 == 0 and items:
            key = items.pop()
            rows.append(ContextMessage(kind="instruction", content=key))
            deliveries = (ContextItemDelivery(key=key, row_offset=1),)
        commit = MessageCommit(
            messages=tuple(rows), commit_id=commit_id, deliver_context_items=deliveries
        )
        maybe = False

        async def attempt(commit: MessageCommit = commit) -> Any:
            nonlocal maybe
            try:
                return await store.append_messages(session_id, commit)
            except StoreUnavailableError as exc:
                maybe = maybe or exc.may_have_landed
                raise

        try:
            result = await _retrying(attempt, outcome, deadline)
        except StateStoreError:
            continue
        if result.replayed and not maybe:
            outcome.wrong.append(f"{commit_id}: landed, but no error said it may have")
        outcome.acked.setdefault(session_id, set()).add(commit_id)


async def _resolver(
    store: SessionStateStore, session_id: str, approval_id: str, outcome: Outcome, deadline: float
) -> None:
    try:
        answer = await _retrying(
            lambda: store.resolve_approval(session_id, approval_id), outcome, deadline
        )
    except StateStoreError:
        return
    if answer == "resolved":
        outcome.resolved[(session_id, approval_id)] += 1


async def run_across_failover(
    store: SessionStateStore,
    fail_over: Callable[[], Awaitable[None]],
    workload: Workload,
    *,
    settle: float = 1.0,
) -> Outcome:
    """Run the workload, ``fail_over()`` in the middle of it, then read back what landed.

    ``fail_over`` returns once the new primary serves; the workload runs ``settle``
    seconds more on it before it stops.
    """
    outcome = Outcome()
    deadline = time.monotonic() + workload.retry_for
    sessions: dict[str, list[str]] = {}
    approvals: list[tuple[str, str]] = []
    now = utcnow()
    for number in range(workload.sessions):
        session_id = (await store.create_session()).id
        keys = [f"item-{number}-{i}" for i in range(workload.items)]
        for key in keys:
            stored = StoredContextItem(
                key=key, item=ContextItem(kind="instruction", content=key), at=now
            )
            await store.record_context_item(session_id, stored)
        pending = [
            PendingApproval(
                approval_id=f"approval-{i}",
                tool_name="deploy",
                tool_call_id=f"call-{i}",
                input={},
                requested_at=now,
            )
            for i in range(workload.approvals)
        ]
        await store.add_pending_approvals(session_id, pending)
        approvals += [(session_id, a.approval_id) for a in pending]
        sessions[session_id] = keys
    stop = asyncio.Event()
    writers = [
        asyncio.ensure_future(_writer(store, sid, f"s{n}w{w}", keys, outcome, stop, deadline))
        for n, (sid, keys) in enumerate(sessions.items())
        for w in range(workload.writers)
    ]
    await asyncio.sleep(0.3)
    # Half the resolvers race before the failover, half across it; two per approval.
    half = len(approvals) // 2
    resolvers = [
        asyncio.ensure_future(_resolver(store, sid, aid, outcome, deadline))
        for sid, aid in approvals[:half] * 2
    ]
    await asyncio.sleep(0.2)
    failing = asyncio.ensure_future(fail_over())
    resolvers += [
        asyncio.ensure_future(_resolver(store, sid, aid, outcome, deadline))
        for sid, aid in approvals[half:] * 2
    ]
    await failing
    await asyncio.sleep(settle)
    stop.set()
    await asyncio.gather(*writers, *resolvers)
    await _read_back(store, sessions, outcome, deadline)
    return outcome


async def _read_back(
    store: SessionStateStore, sessions: dict[str, list[str]], outcome: Outcome, deadline: float
) -> None:
    for session_id in sessions:
        rows = await _retrying(partial(store.get_messages, session_id), outcome, deadline)
        said = Counter(r.content for r in rows if isinstance(r, ChatMessage))
        told = Counter(r.content for r in rows if isinstance(r, ContextMessage))
        outcome.twice += [f"{session_id}: row {c!r} x{n}" for c, n in said.items() if n > 1]
        outcome.delivered_twice += [
            f"{session_id}: item {c!r} x{n}" for c, n in told.items() if n > 1
        ]
        outcome.lost += [
            f"{session_id}: acknowledged commit {c!r} is missing"
            for c in sorted(outcome.acked.get(session_id, set()))
            if said[c] == 0
        ]
    outcome.resolved_twice = [f"{s}/{a} x{n}" for (s, a), n in outcome.resolved.items() if n > 1]


async def append_after_failover(
    store: SessionStateStore, session_id: str, commit: MessageCommit, *, attempts: int = 50
) -> list[StoreUnavailableError]:
    """Append ``commit`` once the store reaches the promoted primary (FO-2), retrying
    every 0.1 s while the store answers unavailable; the errors it answered on the way.

    Give ``commit`` a ``commit_id``: a retry of a write that landed then lands once.
    ``AssertionError`` if ``attempts`` were not enough.
    """
    failures: list[StoreUnavailableError] = []
    for _ in range(attempts):
        try:
            await store.append_messages(session_id, commit)
            return failures
        except StoreUnavailableError as exc:
            failures.append(exc)
            await asyncio.sleep(0.1)
    raise AssertionError(f"never reached the promoted primary: {failures[-1]!r}")
