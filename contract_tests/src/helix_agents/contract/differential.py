"""A differential test: a store against core's reference, operation by operation.

The server backends check a write in the server (a PostgreSQL function, a
Redis script) so that it is one round trip: a second copy of core's rules. This
drives the same generated operation sequences through a reference store (the
memory store: core's rules) and a store under test, and compares every result
and every error — class, code, message, retryable — then everything the session
holds. The operations (``_differential_ops``) cover rows (append, truncate, pop,
replace, pages), runs, context items and late answers, approvals, checkpoints,
clone, clear, scoped state and, when both stores implement it, the context
store (outputs, compactions, the window, history search).

Both stores run on one frozen clock that moves 1 ms before each operation, so
times compare as they are. One thing is normalised before comparing, because
it must differ: the id a store mints for a stored output (random,
``new_output_id``) is replaced, wherever it appears (results and error
messages), by ``out#n``, its rank among the outputs the sequence stored.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from helix_agents.core import SessionStateStore, StateStoreError
from helix_agents.core.context import ContextStore

from ._base import StoreFactory
from ._differential_ops import CONTEXT_OPS, RETENTION, SESSION_OPS, Example, Op, apply, snapshot
from ._helpers import FrozenClock

__all__ = ["DIFFERENTIAL_PROFILE_ENV", "run_differential"]

DIFFERENTIAL_PROFILE_ENV = "HELIX_DIFFERENTIAL_PROFILE"
for _name, _examples in (("helix-diff-ci", 20), ("helix-diff-thorough", 400)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _plain(value: object, ids: dict[str, str]) -> object:
    """``value`` as plain data (models dumped), each minted output id replaced by its label."""
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(), ids)
    if isinstance(value, dict):
        return {k: _plain(v, ids) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, ids) for v in value]
    if isinstance(value, str):
        for real, label in ids.items():
            value = value.replace(real, label)
    return value


async def _outcome(ex: Example, op: Op, seed: int) -> object:
    try:
        result: object = ("ok", await apply(ex, op, seed))
    except StateStoreError as err:
        result = ("error", type(err).__name__, err.code, str(err), err.retryable)
    return _plain(result, {oid: f"out#{n}" for n, oid in enumerate(ex.outputs)})


async def _state(ex: Example) -> object:
    labels = {oid: f"out#{n}" for n, oid in enumerate(ex.outputs)}
    return _plain(await snapshot(ex.store, ex.sid), labels)


def run_differential(
    factory: StoreFactory, reference: Callable[..., SessionStateStore], profile: str | None = None
) -> int:
    """Check the store from ``factory`` against ``reference``'s on generated sequences.

    Pass the memory store as ``reference`` (it runs core's rules and nothing else).
    Context-store operations are generated when both stores implement
    :class:`~helix_agents.core.context.ContextStore`. Runs on its own event loop,
    so call it from a plain synchronous test (or a thread). The Hypothesis
    profile is ``profile``, else ``$HELIX_DIFFERENTIAL_PROFILE``, else
    ``helix-diff-ci`` (a few seconds). Returns how many operations were compared.
    """
    name = profile or os.environ.get(DIFFERENTIAL_PROFILE_ENV, "helix-diff-ci")
    compared = 0
    clock = FrozenClock()
    with asyncio.Runner() as runner:
        store = factory(max_messages=RETENTION, clock=clock)
        model = reference(max_messages=RETENTION, clock=clock)
        runner.run(store.__aenter__())
        runner.run(model.__aenter__())
        ops = SESSION_OPS
        if isinstance(store, ContextStore) and isinstance(model, ContextStore):
            ops = SESSION_OPS + CONTEXT_OPS
        try:

            @settings(settings.get_profile(name))
            @given(sequence=st.lists(st.one_of(ops), min_size=5, max_size=14))
            def check(sequence: list[Op]) -> None:
                nonlocal compared
                sid = f"diff-{uuid.uuid4().hex[:12]}"
                expected_side, actual_side = Example(model, sid), Example(store, sid)
                runner.run(model.create_session(sid, user_id="diff-user"))
                runner.run(store.create_session(sid, user_id="diff-user"))
                try:
                    for seed, op in enumerate(sequence):
                        note(f"{seed}: {op!r}")
                        clock.advance(0.001)
                        expected = runner.run(_outcome(expected_side, op, seed))
                        actual = runner.run(_outcome(actual_side, op, seed))
                        assert actual == expected, f"{op!r}: core {expected!r} != store {actual!r}"
                        compared += 1
                    assert runner.run(_state(actual_side)) == runner.run(_state(expected_side))
                finally:
                    runner.run(store.delete_session(sid))

            check()
        finally:
            runner.run(model.__aexit__(None, None, None))
            runner.run(store.__aexit__(None, None, None))
    return compared
