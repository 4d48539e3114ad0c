"""examples/langgraph_resume.py: interrupted in one process, resumed in the next, per backend."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Protocol

EXAMPLE = Path(__file__).parents[3] / "examples" / "langgraph_resume.py"
ASKED = "waiting for approval: {'tool': 'delete_file', 'args': {'path': '/tmp/old-report.txt'}}"
FINISHED = "ai: Finished: deleted /tmp/old-report.txt."


class Backend(Protocol):
    """The ``backend`` fixture: where the example's store lives."""

    name: str
    url: str
    namespace: str | None


def _run(url: str, thread: str, step: str, namespace: str | None = None) -> tuple[int, str, str]:
    extra = [] if namespace is None else ["--namespace", namespace]
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), url, thread, step, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_resumes_after_the_process_restarts(backend: Backend) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    if backend.name == "memory":  # nothing outlives the process: both steps in one
        code, out, err = _run(backend.url, thread, "both")
        assert code == 0, err
        assert out.splitlines()[0] == ASKED and out.splitlines()[-1] == FINISHED
        return
    code, first, err = _run(backend.url, thread, "start", backend.namespace)
    assert code == 0, err
    assert first.strip() == ASKED
    code, second, err = _run(backend.url, thread, "approve", backend.namespace)
    assert code == 0, err
    lines = second.splitlines()
    assert lines[0] == f"resuming {thread!r} at ('approval',): approve"
    assert "tool: deleted /tmp/old-report.txt" in lines
    assert lines[-1] == FINISHED


def test_a_refusal_reaches_the_model_and_the_thread_ends(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lg.db'}"
    assert _run(url, "t1", "start")[0] == 0
    code, out, err = _run(url, "t1", "reject")
    assert code == 0, err
    assert "tool: the user refused" in out.splitlines()
    assert "deleted" not in out
    code, out, err = _run(url, "t1", "approve")
    assert code != 0 and "'t1' is not waiting for an approval" in err
