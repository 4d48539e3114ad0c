"""ADP-4/ADP-5 as a property: any channel value comes back exactly, or is refused unchanged.

Hypothesis runs on a worker thread through the sync API (the store stays open
on the test's loop), and reads back through a second store instance. The
oracle is written here, apart from the saver: a value is refused exactly when
it holds NaN or infinity, a lone surrogate, or an int of more than 600 digits.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from helix_agents.core import ValidationError
from helix_agents.langgraph import HelixCheckpointSaver, UnstorableValueError

from .test_saver import META, Backend, _checkpoint, _config

pytestmark = pytest.mark.anyio

ODD_TEXT = ["", "\x00", "a\x00b", "\ud800", "x\udfffy", "\u2028", "\x1f", "é", "\U0001f600"]
BIG = 10**600

texts = st.text(max_size=8) | st.sampled_from(ODD_TEXT)
ints = st.integers(-(2**70), 2**70) | st.sampled_from([BIG - 1, -BIG + 1, BIG, -BIG, 10**900])
floats = st.floats(allow_nan=True, allow_infinity=True)
leaves = st.none() | st.booleans() | ints | floats | texts | st.binary(max_size=8)
keys = st.none() | st.booleans() | ints | floats | texts | st.tuples(ints, texts)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=16,
)


def _refusable(value: Any) -> bool:
    """Whether core's rules refuse something in ``value`` (the oracle)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) >= BIG
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, list | tuple):
        return any(_refusable(v) for v in value)
    if isinstance(value, dict):
        return any(_refusable(k) or _refusable(v) for k, v in value.items())
    return False


def _typed(value: Any) -> Any:
    """``value`` with every part's type spelled out, so that equality means exactness."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, dict):
        items = sorted(((repr(_typed(k)), _typed(v)) for k, v in value.items()), key=repr)
        return ("dict", items)
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


async def test_channel_values_round_trip_exactly_or_are_refused(backend: Backend) -> None:
    async with backend.open() as store, backend.open() as other:
        saver, reader = HelixCheckpointSaver(store), HelixCheckpointSaver(other)
        thread = str(uuid.uuid4())
        first = saver.aput(_config(thread), _checkpoint(seed=0), META, {})
        latest = (await first)["configurable"]["checkpoint_id"]
        seen = {"accepted": 0, "refused": 0}

        @settings(
            max_examples=75,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(value=values)
        def check(value: Any) -> None:
            nonlocal latest
            note(f"value: {value!r}")
            checkpoint = _checkpoint(v=value)
            before = reader.get_tuple(_config(thread))
            refused: UnstorableValueError | None = None
            try:
                stored = saver.put(_config(thread, latest, helix_fork=True), checkpoint, META, {})
                saver.put_writes(stored, [("v", value)], "task")
            except UnstorableValueError as err:
                refused = err
            if refused is not None:
                assert _refusable(value), f"refused a storable value: {refused}"
                assert isinstance(refused, ValidationError) and isinstance(refused, TypeError)
                assert refused.code == "validation_error" and refused.session_id == thread
                assert reader.get_tuple(_config(thread)) == before  # nothing landed
                seen["refused"] += 1
                return
            assert not _refusable(value), "accepted a value core's rules refuse"
            tup = reader.get_tuple(stored)
            assert tup is not None
            assert _typed(tup.checkpoint["channel_values"]["v"]) == _typed(value)
            assert tup.pending_writes is not None
            [(_, channel, written)] = tup.pending_writes
            assert channel == "v" and _typed(written) == _typed(value)
            latest = stored["configurable"]["checkpoint_id"]
            seen["accepted"] += 1

        await asyncio.to_thread(check)
        assert seen["accepted"] > 0 and seen["refused"] > 0, seen
