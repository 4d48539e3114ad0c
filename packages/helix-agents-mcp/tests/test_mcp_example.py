"""examples/mcp_resume.py: a client drops a stream and resumes it from a restarted server."""

from __future__ import annotations

from pathlib import Path

from example_runs import run_example


def test_example_client_resumes_with_last_event_id_after_a_server_restart(
    tmp_path: Path,
) -> None:
    out = run_example("mcp_resume.py", tmp_path / "events.db")
    assert out.splitlines() == [
        "server 1 up",
        "tick 1",
        "tick 2",
        "connection dropped",
        "server 1 killed",
        "server 2 up",
        # Replayed by the new server from the store: what the client missed, then the result.
        "resumed: tick 3",
        "resumed: tick 4",
        "resumed: tick 5",
        "result: counted to 5",
    ]
