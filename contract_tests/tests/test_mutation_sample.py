"""A sample of the mutation run in every CI run: each sampled mutant must be killed.

The full run (``make mutation``) is too slow for CI; this runs a few mutants of the
memory store and the core modules it runs on, chosen by a seed among those not judged
equivalent, against the contract suite on the memory store. ``HELIX_MUTATION_SEED`` picks
another sample (a nightly job can pass the date); ``HELIX_MUTATION_SAMPLE`` its size.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

RUNNER = Path(__file__).resolve().parents[1] / "mutation.py"


def _runner() -> ModuleType:
    spec = spec_from_file_location("mutation", RUNNER)
    assert spec is not None and spec.loader is not None
    module = sys.modules["mutation"] = module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUNNER), *args], capture_output=True, text=True, timeout=900
    )


def test_sampled_mutants_are_killed() -> None:
    size = os.environ.get("HELIX_MUTATION_SAMPLE", "10")
    seed = os.environ.get("HELIX_MUTATION_SEED", "0")
    done = _run("--sample", size, "--seed", seed)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Mutants: {size}; killed: {size} " in done.stdout, done.stdout


def test_a_surviving_mutant_fails_the_run() -> None:
    # A checkpoint table that never indexes new ids, against a rule that pages only once.
    mutation = _runner()
    [mutant, *_] = [
        m
        for m in mutation.mutants()
        if m.path.endswith("inprocess/_checkpoints.py") and m.line == "if key not in self:"
    ]
    done = _run("--keys", mutant.key, "--pytest", f"{mutation.TESTS} -k CKP_4")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"| {mutant.key} |" in done.stdout and "a gap in the suite" in done.stdout
