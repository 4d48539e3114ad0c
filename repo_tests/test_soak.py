"""A sample of the soak (``make soak``, docs/lifecycle.md "Storage stays flat"): turns
on sessions that come and go under ``idle_ttl`` and ``keep_checkpoints``, the storage
bounded after warm-up."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SOURCE = Path(__file__).parents[1] / "bench" / "soak.py"
_spec = importlib.util.spec_from_file_location("helix_bench_soak", _SOURCE)
assert _spec is not None and _spec.loader is not None
soak_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = soak_module  # dataclasses look their module up by name
_spec.loader.exec_module(soak_module)
Soak, run_soak = soak_module.Soak, soak_module.run_soak

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("backend", ["sqlite", "memory"])
async def test_storage_stays_flat_over_5000_turns(backend: str, tmp_path: Path) -> None:
    soak = await run_soak(Soak(backend, 5_000, samples=20), tmp_path)
    flat, bound, peak = soak.verdict()
    assert flat, (bound, peak, soak.measured)
    # Sessions are deleted, not only hidden: at most the active ones, those waiting out
    # their idle TTL and those since the last sweep are listed.
    assert max(live for _, _, live in soak.measured) <= 2 * soak.slots + 10
    # Every session ever created: 5,000 turns / 20 per session; nearly all are gone.
    assert soak.measured[-1][2] < soak.turns / soak.turns_per_session / 2
