"""A differential test: a store against core's reference, operation by operation.

The server backends check a write in the server (a PostgreSQL function, a
Redis script) so that it is one round trip: a second copy of core's rules. This
drives the same generated operation sequences through a reference store (the
memory store: core's rules) and a store under test, and compares every result
and every error — class, code, message, retryable — then the rows and the run.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable
from typing import Any, Literal

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from helix_agents.core import (
    ChatMessage,
    CommitResult,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    LateAnswerDelivery,
    Message,
    MessageCommit,
    RecordResult,
    SessionStateStore,
    StartRun,
    StateStoreError,
    StoredContextItem,
)

from ._base import StoreFactory
from ._helpers import T0

__all__ = ["DIFFERENTIAL_PROFILE_ENV", "run_differential"]

DIFFERENTIAL_PROFILE_ENV = "HELIX_DIFFERENTIAL_PROFILE"
for _name, _examples in (("helix-diff-ci", 25), ("helix-diff-thorough", 400)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )

# Small pools, so that sequences collide: reused run ids, stale fences, delivered keys.
RUNS = st.sampled_from(["r1", "r2", "r3"])
FENCE = st.none() | RUNS
SMALL = st.integers(0, 5)
RETENTION = 4  # both stores keep the newest 4 rows, so rewinds can fall below them

Op = tuple[Any, ...]


def _deliveries(keys: list[str]) -> st.SearchStrategy[list[tuple[str, int]]]:
    return st.lists(st.tuples(st.sampled_from(keys), st.integers(0, 2)), max_size=2)


OPS: st.SearchStrategy[Op] = st.one_of(
    st.tuples(
        st.just("append"),
        st.integers(0, 3),  # rows
        st.none() | st.tuples(RUNS, st.none() | SMALL),  # start_run, rewind_to
        FENCE,
        st.none() | SMALL,  # expect_message_count
        _deliveries(["k1", "k2"]),
        _deliveries(["c1", "c2"]),
        st.none() | st.sampled_from(["x1", "x2"]),  # commit_id
    ),
    st.tuples(st.just("record_item"), st.sampled_from(["k1", "k2"]), FENCE),
    st.tuples(st.just("record_late"), st.sampled_from(["c1", "c2"]), FENCE),
    st.tuples(st.just("truncate"), SMALL, FENCE),
    st.tuples(st.just("pop"), st.integers(1, 3), FENCE),
    st.tuples(st.just("replace"), SMALL, st.integers(0, 2), SMALL, FENCE),
    st.tuples(st.just("finish"), RUNS, st.sampled_from(["completed", "cancelled"])),
)


def _rows(n: int, seed: int) -> tuple[Message, ...]:
    return tuple(
        ContextMessage(kind="notice", content=f"{seed}.{i}")
        if i % 2
        else ChatMessage(role="user", content=f"{seed}.{i}")
        for i in range(n)
    )


async def _apply(store: SessionStateStore, sid: str, op: Op, seed: int) -> object:
    kind = op[0]
    if kind == "append":
        _, n, start, fence, expect, items, late, cid = op
        commit = MessageCommit(
            messages=_rows(n, seed),
            start_run=None if start is None else StartRun(run_id=start[0], rewind_to=start[1]),
            fence_run_id=fence,
            expect_message_count=expect,
            deliver_context_items=tuple(ContextItemDelivery(key=k, row_offset=o) for k, o in items),
            deliver_late_answers=tuple(
                LateAnswerDelivery(call_id=c, row_offset=o) for c, o in late
            ),
            commit_id=cid,
        )
        return await store.append_messages(sid, commit)
    if kind == "record_item":
        item = ContextItem(kind="notice", content=op[1])
        record = StoredContextItem(key=op[1], item=item, at=T0)
        return await store.record_context_item(sid, record, fence_run_id=op[2])
    if kind == "record_late":
        answer = LateAnswer(call_id=op[1], tool_name="t", output="late", at=T0)
        return await store.record_late_answer(sid, answer, fence_run_id=op[2])
    if kind == "truncate":
        await store.truncate_messages(sid, op[1], fence_run_id=op[2])
        return None
    if kind == "pop":
        return await store.pop_messages(sid, op[1], fence_run_id=op[2])
    if kind == "replace":
        _, keep, n, expect, fence = op
        return await store.replace_messages(
            sid, keep, _rows(n, seed), expect_message_count=expect, fence_run_id=fence
        )
    status: Literal["completed", "cancelled"] = op[2]
    await store.finish_run(sid, op[1], status)
    return None


def _plain(result: object) -> object:
    """A result in a form both stores give alike (no object identity, no store times)."""
    if isinstance(result, (CommitResult, RecordResult)):
        return result.model_dump()
    if isinstance(result, list):
        return [m.model_dump() for m in result]
    return result


async def _outcome(store: SessionStateStore, sid: str, op: Op, seed: int) -> object:
    try:
        return ("ok", _plain(await _apply(store, sid, op, seed)))
    except StateStoreError as err:
        return ("error", type(err).__name__, err.code, str(err), err.retryable)


async def _state(store: SessionStateStore, sid: str) -> object:
    info = await store.get_session(sid)
    assert info is not None
    run = info.current_run
    rows = [m.model_dump() for m in await store.get_messages(sid)]
    return info.message_count, None if run is None else (run.run_id, run.status), rows


def run_differential(
    factory: StoreFactory, reference: Callable[..., SessionStateStore], profile: str | None = None
) -> int:
    """Check the store from ``factory`` against ``reference``'s on generated sequences.

    Pass the memory store as ``reference`` (it runs core's rules and nothing else).
    Runs on its own event loop, so call it from a plain synchronous test (or a
    thread). The Hypothesis profile is ``profile``, else
    ``$HELIX_DIFFERENTIAL_PROFILE``, else ``helix-diff-ci`` (a few seconds).
    Returns how many operations were compared.
    """
    name = profile or os.environ.get(DIFFERENTIAL_PROFILE_ENV, "helix-diff-ci")
    compared = 0
    with asyncio.Runner() as runner:
        store = factory(max_messages=RETENTION)
        model = reference(max_messages=RETENTION)
        runner.run(store.__aenter__())
        runner.run(model.__aenter__())
        try:

            @settings(settings.get_profile(name))
            @given(ops=st.lists(OPS, min_size=1, max_size=12))
            def check(ops: list[Op]) -> None:
                nonlocal compared
                sid = f"diff-{uuid.uuid4().hex[:12]}"
                runner.run(model.create_session(sid))
                runner.run(store.create_session(sid))
                try:
                    for seed, op in enumerate(ops):
                        note(f"{seed}: {op!r}")
                        expected = runner.run(_outcome(model, sid, op, seed))
                        actual = runner.run(_outcome(store, sid, op, seed))
                        assert actual == expected, f"{op!r}: core {expected!r} != store {actual!r}"
                        compared += 1
                    assert runner.run(_state(store, sid)) == runner.run(_state(model, sid))
                finally:
                    runner.run(store.delete_session(sid))

            check()
        finally:
            runner.run(model.__aexit__(None, None, None))
            runner.run(store.__aexit__(None, None, None))
    return compared
