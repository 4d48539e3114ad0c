"""A Hypothesis state machine that drives any store and compares it with the pure model."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Coroutine
from datetime import datetime
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
    Checkpoint,
    Message,
    MessageCommit,
    PendingApproval,
    SessionStateStore,
    StateStoreError,
)
from helix_agents.core.models import RunStatus

from ._base import StoreFactory
from ._coverage import MIN_LANDED_SHARE, StepCounts
from ._helpers import (
    T0,
    item,
    item_deliveries,
    late_deliveries,
    notice,
    start,
    user,
)
from ._helpers import checkpoint as make_checkpoint
from ._helpers import late as late_answer
from .model import SessionModel

__all__ = ["PROFILE_ENV", "run_state_machine"]

PROFILE_ENV = "HELIX_CONTRACT_PROFILE"
"""The variable naming the state machine's profile: ``helix-ci`` or ``helix-thorough``."""
for _name, _examples, _steps in (("helix-ci", 20, 25), ("helix-thorough", 300, 60)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        stateful_step_count=_steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )

_T = TypeVar("_T")
SIDS = ("s0", "s1", "s2")
"""The sessions a run touches; the last is also where clones go."""
GONE = "r-gone"
"""A run id no session ever starts: a fence on it is always refused."""
# Most steps are built valid from the model; the others carry one fault (see ``valid``).
VALID = st.sampled_from([True, False])
PICK = st.integers(0, 2**16)


def _row(text: str) -> Message:
    return notice(text) if int(text) % 2 else user(text)


class StoreMachine(RuleBasedStateMachine):
    """Each step runs one operation on the store and on the model; outcomes must agree."""

    factory: StoreFactory
    counts: StepCounts

    def __init__(self) -> None:
        super().__init__()
        self.runner = asyncio.Runner()
        self.store: SessionStateStore = self.factory()
        self.run(self.store.__aenter__())
        self.model = SessionModel()
        self.prefix = f"sm-{uuid.uuid4().hex[:8]}-"
        self.counter = 0
        # Steps of this example alone: the share of faults must not depend on earlier
        # examples, or Hypothesis could not replay one.
        self.local = StepCounts()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return self.runner.run(coro)

    def teardown(self) -> None:
        try:
            for sid in list(self.model.sessions):
                self.run(self.store.delete_session(self.prefix + sid))
            self.run(self.store.__aexit__(None, None, None))
        finally:
            self.runner.close()

    def both(
        self,
        kind: str,
        model_op: Callable[[], object],
        store_op: Coroutine[Any, Any, Any],
        valid: bool = True,
    ) -> Any:
        """Run a step of ``kind`` on both sides, check they agree, and count whether it landed.

        A step built ``valid`` from the model must land: if the model refuses it,
        the machine built it wrong.
        """
        try:
            expected: object = model_op()
        except StateStoreError as exc:
            expected = type(exc)
        refused = isinstance(expected, type)
        assert not (valid and refused), f"{kind} was built valid but the model refuses it"
        try:
            actual: object = self.run(store_op)
        except StateStoreError as exc:
            note(f"store raised {exc!r}")
            actual = type(exc)
        assert _same(expected, actual), f"{kind}: model {expected!r} != store {actual!r}"
        self.counts.count(kind, not isinstance(actual, type))
        self.local.count(kind, not isinstance(actual, type))
        return actual

    def valid(self, kind: str, drawn: bool) -> bool:
        """Hypothesis draws whether a step carries a fault; the faults stay a minority."""
        return drawn or not self.local.allows_fault(kind)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def rows(self, n: int) -> list[str]:
        self.counter += n
        return [str(self.counter - i) for i in range(n, 0, -1)]

    def existing(self, pick: int) -> str:
        """A session the model has (creating ``s0`` when there is none)."""
        if not self.model.sessions:
            self.create(True, 0)
        names = sorted(self.model.sessions)
        return names[pick % len(names)]

    def missing(self, pick: int) -> str | None:
        names = [sid for sid in SIDS if sid not in self.model.sessions]
        return names[pick % len(names)] if names else None

    def live_run(self, sid: str) -> str | None:
        run = self.model.sessions[sid].run
        return run[0] if run is not None and run[1] == "live" else None

    def fence(self, sid: str, pick: int, valid: bool) -> str | None:
        """No fence or the live run when ``valid``; a run that is not live otherwise."""
        if not valid:
            return GONE
        return self.live_run(sid) if pick % 2 else None

    def queued(self, queue: dict[str, int | None], n: int, pick: int) -> list[tuple[str, int]]:
        """Some of the queued keys (at most ``n``), each at an offset within ``n`` rows."""
        keys = sorted(k for k, index in queue.items() if index is None)
        if not (keys and n):
            return []
        first = pick % len(keys)
        return [(k, i % n) for i, k in enumerate(keys[first : first + n])]

    @initialize()
    def create_all(self) -> None:
        for sid in SIDS[:2]:
            self.both(
                "create",
                lambda sid=sid: self.model.create(sid),  # type: ignore[misc]
                _void(self.store.create_session(self.prefix + sid, user_id=self.prefix)),
            )

    @rule(valid=VALID, pick=PICK)
    def create(self, valid: bool, pick: int) -> None:
        valid = self.valid("create", valid)
        if valid and self.missing(pick) is None:
            self.delete(True, pick)
        sid = (self.missing(pick) if valid else None) or self.existing(pick)
        self.both(
            "create",
            lambda: self.model.create(sid),
            _void(self.store.create_session(self.prefix + sid, user_id=self.prefix)),
            valid,
        )

    @rule(valid=VALID, pick=PICK)
    def delete(self, valid: bool, pick: int) -> None:
        valid = self.valid("delete", valid)
        sid = (None if valid else self.missing(pick)) or self.existing(pick)
        self.both(
            "delete",
            lambda: self.model.delete(sid),
            self.store.delete_session(self.prefix + sid),
            valid,
        )

    @rule(valid=VALID, pick=PICK)
    def clear(self, valid: bool, pick: int) -> None:
        valid = self.valid("clear", valid)
        sid = (None if valid else self.missing(pick)) or self.existing(pick)
        self.both(
            "clear",
            lambda: self.model.clear(sid),
            self.store.clear_session(self.prefix + sid),
            valid,
        )

    @rule(valid=VALID, pick=PICK, n=st.integers(0, 3), with_id=st.sampled_from([0, 0, 1, 2]))
    def append(self, valid: bool, pick: int, n: int, with_id: int) -> None:
        valid = self.valid("append", valid)
        sid = self.existing(pick)
        session = self.model.sessions[sid]
        count = len(session.rows)
        items = self.queued(session.items, n, pick)
        late = self.queued(session.late, n, pick // 7)
        fence = self.fence(sid, pick, True)
        expect: int | None = count if pick % 3 else None
        known = sorted(session.commits)
        commit_id = (
            None
            if with_id == 0
            else known[pick % len(known)]
            if with_id == 2 and known
            else self.fresh("c")
        )
        if not valid:
            fault = pick % 4
            if fault == 0:
                expect = count + 1
            elif fault == 1:
                fence = GONE
            elif fault == 2 and n:
                items = [*items, ("k-none", 0)]
            else:
                late = [*late, ("k-none", n)]
        self._commit("append", valid, sid, n, None, None, expect, fence, items, late, commit_id)

    @rule(valid=VALID, pick=PICK, n=st.integers(0, 2), rewind=st.booleans())
    def start_run(self, valid: bool, pick: int, n: int, rewind: bool) -> None:
        valid = self.valid("start_run", valid)
        sid = self.existing(pick)
        session = self.model.sessions[sid]
        count = len(session.rows)
        rewind_to = pick % (count + 1) if rewind else None
        run_id = self.fresh("r")
        if not valid:
            if session.run_ids and pick % 2:
                run_id = sorted(session.run_ids)[pick % len(session.run_ids)]
            else:
                rewind_to = count + 1
        # An item delivered past the rewind point is queued again for this very commit.
        items = self.queued(session.items, n, pick)
        late = self.queued(session.late, n, pick // 5)
        self._commit(
            "start_run", valid, sid, n, run_id, rewind_to, count + 7, None, items, late, None
        )

    def _commit(
        self,
        kind: str,
        valid: bool,
        sid: str,
        n: int,
        run_id: str | None,
        rewind_to: int | None,
        expect: int | None,
        fence: str | None,
        items: list[tuple[str, int]],
        late: list[tuple[str, int]],
        commit_id: str | None,
    ) -> None:
        texts = self.rows(n)
        commit = MessageCommit(
            messages=tuple(_row(t) for t in texts),
            start_run=None if run_id is None else start(run_id, rewind_to),
            fence_run_id=fence,
            expect_message_count=expect,
            commit_id=commit_id,
            deliver_context_items=item_deliveries(items),
            deliver_late_answers=late_deliveries(late),
        )
        self.both(
            kind,
            lambda: self.model.commit(
                sid,
                texts,
                run_id=run_id,
                rewind_to=rewind_to,
                fence=fence,
                expect=expect,
                deliver=items,
                deliver_late=late,
                commit_id=commit_id,
            ),
            self._append(sid, commit),
            valid,
        )

    async def _append(self, sid: str, commit: MessageCommit) -> tuple[int, int, bool]:
        result = await self.store.append_messages(self.prefix + sid, commit)
        return result.first_index, result.message_count, result.replayed

    @rule(valid=VALID, pick=PICK, status=st.sampled_from(["completed", "failed", "cancelled"]))
    def finish(self, valid: bool, pick: int, status: RunStatus) -> None:
        valid = self.valid("finish", valid)
        sid = self.existing(pick)
        if valid and self.live_run(sid) is None:
            self.start_run(True, pick, 0, False)
        run_id = (self.live_run(sid) if valid else None) or GONE
        self.both(
            "finish",
            lambda: self.model.finish(sid, run_id, status),
            self.store.finish_run(self.prefix + sid, run_id, status),
            valid,
        )

    @rule(valid=VALID, pick=PICK, late=st.booleans(), again=st.booleans())
    def record(self, valid: bool, pick: int, late: bool, again: bool) -> None:
        valid = self.valid("record", valid)
        sid = self.existing(pick)
        fence = self.fence(sid, pick, valid)
        queue = self.model.sessions[sid].late if late else self.model.sessions[sid].items
        known = sorted(queue)
        key = known[pick % len(known)] if again and known else self.fresh("k")
        self.both(
            "record",
            lambda: self.model.record(sid, key, fence, late=late),
            self._record(sid, key, fence, late),
            valid,
        )

    async def _record(self, sid: str, key: str, fence: str | None, late: bool) -> bool:
        if late:
            answer = late_answer(key, output={"k": key}, tool="t")
            result = await self.store.record_late_answer(
                self.prefix + sid, answer, fence_run_id=fence
            )
        else:
            result = await self.store.record_context_item(
                self.prefix + sid, item(key, content=key), fence_run_id=fence
            )
        return result.recorded

    @rule(valid=VALID, pick=PICK)
    def checkpoint(self, valid: bool, pick: int) -> None:
        valid = self.valid("checkpoint", valid)
        sid = self.existing(pick)
        rows = len(self.model.sessions[sid].rows)
        count = pick % (rows + 1)
        fence = self.fence(sid, pick, True)
        if not valid:
            count, fence = (rows + 1, fence) if pick % 2 else (count, GONE)
        checkpoint_id = self.fresh("p")
        saved = make_checkpoint(
            checkpoint_id, count, self.counter, run_id="r", state={"n": self.counter}
        )
        self.both(
            "checkpoint",
            lambda: self.model.save_checkpoint(sid, checkpoint_id, count, fence),
            self._checkpoint(sid, saved, fence),
            valid,
        )

    async def _checkpoint(self, sid: str, saved: Checkpoint, fence: str | None) -> bool:
        result = await self.store.save_checkpoint(self.prefix + sid, saved, fence_run_id=fence)
        return result.recorded

    @rule(valid=VALID, pick=PICK)
    def truncate(self, valid: bool, pick: int) -> None:
        valid = self.valid("truncate", valid)
        sid = self.existing(pick)
        rows = len(self.model.sessions[sid].rows)
        keep = pick % (rows + 1) if valid else rows + 1
        self.both(
            "truncate",
            lambda: self.model.truncate(sid, keep),
            self.store.truncate_messages(self.prefix + sid, keep),
            valid,
        )

    @rule(valid=VALID, pick=PICK, count=st.integers(1, 4))
    def pop(self, valid: bool, pick: int, count: int) -> None:
        valid = self.valid("pop", valid)
        sid = self.existing(pick)
        fence = self.fence(sid, pick, True)
        if not valid:
            count, fence = (0, fence) if pick % 2 else (count, GONE)
        self.both(
            "pop", lambda: self.model.pop(sid, count, fence), self._pop(sid, count, fence), valid
        )

    async def _pop(self, sid: str, count: int, fence: str | None) -> list[Any]:
        popped = await self.store.pop_messages(self.prefix + sid, count, fence_run_id=fence)
        return [row.content for row in popped]

    @rule(valid=VALID, pick=PICK, n=st.integers(0, 2))
    def replace(self, valid: bool, pick: int, n: int) -> None:
        valid = self.valid("replace", valid)
        sid = self.existing(pick)
        expect = len(self.model.sessions[sid].rows)
        keep = pick % (expect + 1)
        fence = self.fence(sid, pick, True)
        if not valid:
            expect, fence = (expect + 1, fence) if pick % 2 else (expect, GONE)
        texts = self.rows(n)
        self.both(
            "replace",
            lambda: self.model.replace(sid, keep, texts, expect, fence),
            self._replace(sid, keep, texts, expect, fence),
            valid,
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

    @rule(valid=VALID, pick=PICK, whole=st.booleans())
    def clone(self, valid: bool, pick: int, whole: bool) -> None:
        valid = self.valid("clone", valid)
        source = self.existing(pick)
        rows = len(self.model.sessions[source].rows)
        up_to = None if whole else pick % (rows + 1)
        target = self.missing(pick)
        if target is None and valid:
            doomed = target = next(sid for sid in SIDS[::-1] if sid != source)
            self.both(
                "delete",
                lambda: self.model.delete(doomed),
                self.store.delete_session(self.prefix + doomed),
            )
        if not valid:
            target, up_to = (source, up_to) if pick % 2 else (target or source, rows + 1)
        assert target is not None
        self.both(
            "clone",
            lambda: self.model.clone(source, target, up_to),
            self._clone(source, target, up_to),
            valid,
        )

    async def _clone(self, sid: str, target: str, up_to: int | None) -> None:
        await _void(self.store.clone_session(self.prefix + sid, self.prefix + target, up_to=up_to))

    @rule(valid=VALID, pick=PICK, again=st.booleans())
    def add_approval(self, valid: bool, pick: int, again: bool) -> None:
        valid = self.valid("add_approval", valid)
        sid = self.existing(pick)
        known = sorted(self.model.sessions[sid].pending | self.model.sessions[sid].resolved)
        approval_id = known[pick % len(known)] if again and known else self.fresh("a")
        fence = self.fence(sid, pick, valid)
        approval = PendingApproval(
            approval_id=approval_id, tool_name="t", tool_call_id="c", input={}, requested_at=T0
        )
        self.both(
            "add_approval",
            lambda: self.model.add_approval(sid, approval_id, fence),
            self.store.add_pending_approvals(self.prefix + sid, [approval], fence_run_id=fence),
            valid,
        )

    @rule(valid=VALID, pick=PICK)
    def resolve(self, valid: bool, pick: int) -> None:
        valid = self.valid("resolve", valid)
        sid = self.existing(pick)
        pending = sorted(self.model.sessions[sid].pending)
        if valid and not pending:
            self.add_approval(True, pick, False)
            pending = sorted(self.model.sessions[sid].pending)
        approval_id = pending[pick % len(pending)] if valid else "a-none"
        self.both(
            "resolve",
            lambda: self.model.resolve(sid, approval_id),
            self.store.resolve_approval(self.prefix + sid, approval_id),
            valid,
        )

    @invariant()
    def reads_match_model(self) -> None:
        self.run(self._check_reads())

    async def _check_reads(self) -> None:
        listed = await self.store.list_sessions(self.prefix, first=500)
        assert sorted(s.id for s in listed.sessions) == sorted(
            self.prefix + sid for sid in self.model.sessions
        )
        for sid in SIDS:
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


def run_state_machine(
    factory: StoreFactory, profile: str | None = None, min_share: float = MIN_LANDED_SHARE
) -> StepCounts:
    """Drive stores from ``factory`` through random operation sequences, checking the model.

    Runs on its own event loop, so call it from a plain synchronous test. The
    Hypothesis profile is ``profile``, else ``$HELIX_CONTRACT_PROFILE``, else
    ``helix-ci``. Returns the steps tried and landed by kind, and fails when a
    kind of step tried often enough landed less than ``min_share`` of the time.
    """
    name = profile or os.environ.get(PROFILE_ENV, "helix-ci")
    counts = StepCounts()
    machine = type(
        "StoreMachineUnderTest",
        (StoreMachine,),
        {"factory": staticmethod(factory), "counts": counts},
    )
    run_state_machine_as_test(machine, settings=settings.get_profile(name))
    short = counts.shortfalls(min_share)
    assert not short, f"too few steps landed of: {', '.join(short)} ({counts.table()})"
    return counts
