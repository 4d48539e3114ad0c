"""A Hypothesis state machine that drives any store and compares it with the pure model."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any, TypeVar

from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    LateAnswerDelivery,
    Message,
    MessageCommit,
    PendingApproval,
    RunStatus,
    SessionStateStore,
    StartRun,
    StateStoreError,
    StoredContextItem,
)

from ._base import StoreFactory
from ._helpers import T0
from .model import SessionModel

__all__ = ["PROFILE_ENV", "run_state_machine"]

PROFILE_ENV = "HELIX_CONTRACT_PROFILE"
for _name, _examples, _steps in (("helix-ci", 20, 25), ("helix-thorough", 300, 60)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        stateful_step_count=_steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )

_T = TypeVar("_T")
SIDS = st.sampled_from(["s0", "s1"])
RUNS = st.sampled_from([f"r{i}" for i in range(8)])
KEYS = st.sampled_from(["k0", "k1", "k2"])
FENCE = st.sampled_from([None, None, None, "current", "current", "r5"])
EXPECT = st.sampled_from(["none", "right", "right", "stale"])
# "queued" delivers what the model has queued (valid); a bare key may be missing or delivered.
DELIVER = st.one_of(st.just(["queued"]), st.lists(KEYS, max_size=2))


def _row(text: str) -> Message:
    if int(text) % 2:
        return ContextMessage(kind="notice", content=text)
    return ChatMessage(role="user", content=text)


class StoreMachine(RuleBasedStateMachine):
    """Each step runs one operation on the store and on the model; outcomes must agree."""

    factory: StoreFactory

    def __init__(self) -> None:
        super().__init__()
        self.runner = asyncio.Runner()
        self.store: SessionStateStore = self.factory()
        self.run(self.store.__aenter__())
        self.model = SessionModel()
        self.prefix = f"sm-{uuid.uuid4().hex[:8]}-"
        self.counter = 0

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return self.runner.run(coro)

    def teardown(self) -> None:
        try:
            for sid in list(self.model.sessions):
                self.run(self.store.delete_session(self.prefix + sid))
            self.run(self.store.__aexit__(None, None, None))
        finally:
            self.runner.close()

    def both(self, model_op: Callable[[], object], store_op: Coroutine[Any, Any, Any]) -> Any:
        """Run an operation on both sides and check they agree on the outcome."""
        try:
            expected: object = model_op()
        except StateStoreError as exc:
            expected = type(exc)
        try:
            actual: object = self.run(store_op)
        except StateStoreError as exc:
            note(f"store raised {exc!r}")
            actual = type(exc)
        assert _same(expected, actual), f"model {expected!r} != store {actual!r}"
        return actual

    def rows(self, n: int) -> list[str]:
        self.counter += n
        return [str(self.counter - i) for i in range(n, 0, -1)]

    @initialize()
    def create_all(self) -> None:
        for sid in ("s0", "s1"):
            self.lifecycle(sid, "create")

    @rule(sid=SIDS, op=st.sampled_from(["create", "create", "delete", "clear"]))
    def lifecycle(self, sid: str, op: str) -> None:
        key = self.prefix + sid
        if op == "create":
            self.both(
                lambda: self.model.create(sid),
                _void(self.store.create_session(key, user_id=self.prefix)),
            )
        elif op == "delete":
            self.both(lambda: self.model.delete(sid), self.store.delete_session(key))
        else:
            self.both(lambda: self.model.clear(sid), self.store.clear_session(key))

    @rule(
        sid=SIDS,
        n=st.integers(0, 3),
        expect=EXPECT,
        fence=FENCE,
        deliver=DELIVER,
        deliver_late=DELIVER,
        commit_id=st.one_of(st.none(), st.sampled_from(["c0", "c1", "c2"])),
    )
    def append(
        self,
        sid: str,
        n: int,
        expect: str,
        fence: str | None,
        deliver: list[str],
        deliver_late: list[str],
        commit_id: str | None,
    ) -> None:
        self._commit(sid, n, None, None, expect, fence, deliver, deliver_late, commit_id)

    @rule(
        sid=SIDS,
        n=st.integers(0, 2),
        run_id=RUNS,
        rewind_to=st.one_of(st.none(), st.integers(0, 6)),
        deliver=DELIVER,
        deliver_late=DELIVER,
    )
    def start_run(
        self,
        sid: str,
        n: int,
        run_id: str,
        rewind_to: int | None,
        deliver: list[str],
        deliver_late: list[str],
    ) -> None:
        self._commit(sid, n, run_id, rewind_to, "stale", None, deliver, deliver_late, None)

    def fence(self, sid: str, choice: str | None) -> str | None:
        """``"current"`` stands for the model's current run, whatever it is then."""
        if choice != "current":
            return choice
        session = self.model.sessions.get(sid)
        return session.run[0] if session is not None and session.run is not None else "r0"

    def _commit(
        self,
        sid: str,
        n: int,
        run_id: str | None,
        rewind_to: int | None,
        expect: str,
        fence: str | None,
        deliver: list[str],
        deliver_late: list[str],
        commit_id: str | None,
    ) -> None:
        fence = self.fence(sid, fence)
        model_session = self.model.sessions.get(sid)
        count = len(model_session.rows) if model_session else 0
        expected_count = {"none": None, "right": count, "stale": count + 1}[expect]

        def chosen(keys: list[str], queue: dict[str, int | None] | None) -> list[tuple[str, int]]:
            if keys == ["queued"]:
                keys = [key for key, index in (queue or {}).items() if index is None][: max(n, 1)]
            return [(key, i % n if n else 0) for i, key in enumerate(keys)]

        pairs = chosen(deliver, model_session.items if model_session else None)
        late_pairs = chosen(deliver_late, model_session.late if model_session else None)
        texts = self.rows(n)
        commit = MessageCommit(
            messages=tuple(_row(t) for t in texts),
            start_run=None if run_id is None else StartRun(run_id=run_id, rewind_to=rewind_to),
            fence_run_id=fence,
            expect_message_count=expected_count,
            commit_id=commit_id,
            deliver_context_items=tuple(ContextItemDelivery(key=k, row_offset=o) for k, o in pairs),
            deliver_late_answers=tuple(
                LateAnswerDelivery(call_id=k, row_offset=o) for k, o in late_pairs
            ),
        )
        self.both(
            lambda: self.model.commit(
                sid,
                texts,
                run_id=run_id,
                rewind_to=rewind_to,
                fence=fence,
                expect=expected_count,
                deliver=pairs,
                deliver_late=late_pairs,
                commit_id=commit_id,
            ),
            self._append(sid, commit),
        )

    async def _append(self, sid: str, commit: MessageCommit) -> tuple[int, int, bool]:
        result = await self.store.append_messages(self.prefix + sid, commit)
        return result.first_index, result.message_count, result.replayed

    @rule(
        sid=SIDS,
        run_id=st.one_of(st.just("current"), RUNS),
        status=st.sampled_from(["completed", "failed", "cancelled"]),
    )
    def finish(self, sid: str, run_id: str, status: RunStatus) -> None:
        fenced = self.fence(sid, run_id) or run_id
        self.both(
            lambda: self.model.finish(sid, fenced, status),
            self.store.finish_run(self.prefix + sid, fenced, status),
        )

    @rule(sid=SIDS, keys=st.lists(KEYS, min_size=1, max_size=3), fence=FENCE, late=st.booleans())
    def record(self, sid: str, keys: list[str], fence: str | None, late: bool) -> None:
        fence = self.fence(sid, fence)
        for key in keys:
            self.both(
                lambda key=key: self.model.record(sid, key, fence, late=late),  # type: ignore[misc]
                self._record(sid, key, fence, late),
            )

    async def _record(self, sid: str, key: str, fence: str | None, late: bool) -> bool:
        if late:
            answer = LateAnswer(call_id=key, tool_name="t", output={"k": key}, at=T0)
            result = await self.store.record_late_answer(
                self.prefix + sid, answer, fence_run_id=fence
            )
        else:
            item = ContextItem(kind="instruction", content=key)
            record = StoredContextItem(key=key, item=item, at=T0)
            result = await self.store.record_context_item(
                self.prefix + sid, record, fence_run_id=fence
            )
        return result.recorded

    @rule(
        sid=SIDS,
        checkpoint_id=st.sampled_from(["p0", "p1", "p2"]),
        count=st.integers(0, 6),
        fence=FENCE,
    )
    def checkpoint(self, sid: str, checkpoint_id: str, count: int, fence: str | None) -> None:
        fence = self.fence(sid, fence)
        self.counter += 1
        saved = Checkpoint(
            checkpoint_id=checkpoint_id,
            run_id="r",
            message_count=count,
            state={"n": self.counter},
            created_at=T0 + timedelta(seconds=self.counter),
        )
        self.both(
            lambda: self.model.save_checkpoint(sid, checkpoint_id, count, fence),
            self._checkpoint(sid, saved, fence),
        )

    async def _checkpoint(self, sid: str, saved: Checkpoint, fence: str | None) -> bool:
        result = await self.store.save_checkpoint(self.prefix + sid, saved, fence_run_id=fence)
        return result.recorded

    @rule(sid=SIDS, keep=st.integers(0, 6))
    def truncate(self, sid: str, keep: int) -> None:
        self.both(
            lambda: self.model.truncate(sid, keep),
            self.store.truncate_messages(self.prefix + sid, keep),
        )

    @rule(sid=SIDS, count=st.integers(0, 4), fence=FENCE)
    def pop(self, sid: str, count: int, fence: str | None) -> None:
        fence = self.fence(sid, fence)
        self.both(lambda: self.model.pop(sid, count, fence), self._pop(sid, count, fence))

    async def _pop(self, sid: str, count: int, fence: str | None) -> list[Any]:
        popped = await self.store.pop_messages(self.prefix + sid, count, fence_run_id=fence)
        return [row.content for row in popped]

    @rule(
        sid=SIDS,
        keep=st.integers(0, 6),
        n=st.integers(0, 3),
        stale=st.sampled_from([False, False, True]),
        fence=FENCE,
    )
    def replace(self, sid: str, keep: int, n: int, stale: bool, fence: str | None) -> None:
        fence = self.fence(sid, fence)
        model_session = self.model.sessions.get(sid)
        expect = (len(model_session.rows) if model_session else 0) + stale
        texts = self.rows(n)
        self.both(
            lambda: self.model.replace(sid, keep, texts, expect, fence),
            self._replace(sid, keep, texts, expect, fence),
        )

    async def _replace(
        self, sid: str, keep: int, texts: list[str], expect: int, fence: str | None
    ) -> tuple[int, int, bool]:
        result = await self.store.replace_messages(
            self.prefix + sid,
            keep,
            [_row(t) for t in texts],
            expect_message_count=expect,
            fence_run_id=fence,
        )
        return result.first_index, result.message_count, result.replayed

    @rule(sid=SIDS, to=SIDS, up_to=st.one_of(st.none(), st.integers(0, 6)))
    def clone(self, sid: str, to: str, up_to: int | None) -> None:
        self.both(lambda: self.model.clone(sid, to, up_to), self._clone(sid, to, up_to))

    async def _clone(self, sid: str, target: str, up_to: int | None) -> None:
        await _void(self.store.clone_session(self.prefix + sid, self.prefix + target, up_to=up_to))

    @rule(sid=SIDS, resolve=st.booleans(), approval_id=st.sampled_from(["a0", "a1", "a2"]))
    def approval(self, sid: str, resolve: bool, approval_id: str) -> None:
        key = self.prefix + sid
        if resolve:
            self.both(
                lambda: self.model.resolve(sid, approval_id),
                self.store.resolve_approval(key, approval_id),
            )
            return
        approval = PendingApproval(
            approval_id=approval_id, tool_name="t", tool_call_id="c", input={}, requested_at=T0
        )
        self.both(
            lambda: self.model.add_approval(sid, approval_id),
            self.store.add_pending_approvals(key, [approval]),
        )

    @invariant()
    def reads_match_model(self) -> None:
        self.run(self._check_reads())

    async def _check_reads(self) -> None:
        listed = await self.store.list_sessions(self.prefix, first=500)
        assert sorted(s.id for s in listed.sessions) == sorted(
            self.prefix + sid for sid in self.model.sessions
        )
        for sid in ("s0", "s1"):
            expected = self.model.sessions.get(sid)
            info = await self.store.get_session(self.prefix + sid)
            if expected is None:
                assert info is None, f"{sid} should not exist"
                continue
            assert info is not None, f"{sid} should exist"
            rows = await self.store.get_messages(self.prefix + sid)
            assert [r.content for r in rows] == expected.rows
            assert info.message_count == len(expected.rows)
            run = (
                None
                if info.current_run is None
                else (info.current_run.run_id, info.current_run.status)
            )
            assert run == expected.run
            queued = await self.store.list_undelivered_context_items(self.prefix + sid)
            assert sorted(r.key for r in queued) == sorted(
                k for k, i in expected.items.items() if i is None
            )
            late = await self.store.list_undelivered_late_answers(self.prefix + sid)
            assert sorted(a.call_id for a in late) == sorted(
                k for k, i in expected.late.items() if i is None
            )
            checkpoints = await self.store.list_checkpoints(self.prefix + sid)
            assert {c.checkpoint_id: c.message_count for c in checkpoints} == expected.checkpoints
            latest = await self.store.latest_checkpoint(self.prefix + sid)
            assert latest == (max(checkpoints, key=_rank) if checkpoints else None)
            pending = await self.store.list_pending_approvals(self.prefix + sid)
            assert sorted(a.approval_id for a in pending) == sorted(expected.pending)


def _rank(checkpoint: Checkpoint) -> tuple[int, datetime]:
    return (checkpoint.message_count, checkpoint.created_at)


def _same(expected: object, actual: object) -> bool:
    if isinstance(expected, type) or isinstance(actual, type):
        return expected is actual
    return expected == actual


async def _void(call: Coroutine[Any, Any, object]) -> None:
    await call


def run_state_machine(factory: StoreFactory, profile: str | None = None) -> None:
    """Drive stores from ``factory`` through random operation sequences, checking the model.

    Runs on its own event loop, so call it from a plain synchronous test. The
    Hypothesis profile is ``profile``, else ``$HELIX_CONTRACT_PROFILE``, else ``helix-ci``.
    """
    name = profile or os.environ.get(PROFILE_ENV, "helix-ci")
    machine = type("StoreMachineUnderTest", (StoreMachine,), {"factory": staticmethod(factory)})
    run_state_machine_as_test(machine, settings=settings.get_profile(name))
