"""examples/openai_agents_features.py shows OAI-1..OAI-10 end to end, on SQLite and PostgreSQL,
with the approval resolved and resumed in a second process."""

from __future__ import annotations

from pathlib import Path

from example_runs import EXAMPLES, run_example


def check(out: str) -> None:
    """What the example must have printed, part by part."""
    memory = '<context kind="memory"> Ada prefers tea. </context>'
    assert f"model saw: ['{memory}']" in out
    assert "still queued: 0" in out
    assert f"next run, model saw (from the history): ['{memory}']" in out
    assert "first runner refused: state_run_superseded" in out
    assert "queued late answers: [('call-search', '3 results for tea')]" in out
    assert "The tool call call-search (slow_search) answered after its run had ended" in out
    assert "pending: [('c-1', 'delete_file', {'path': 'old.log'})]" in out
    assert "[second process] decide approve=True: resolved" in out
    assert "[second process] decide approve=False: already-resolved" in out
    assert "[second process] tool ran: 'deleted old.log'; agent> Deleted old.log." in out
    assert "back in the first process: run completed, 4 rows, 0 pending approvals" in out
    assert "model saw: [Output stored as out-" in out and "500 lines]" in out
    assert "read back: ['378: 00377 ERROR disk full']" in out
    tools = "'read_tool_output', 'recall_history'"
    assert f"offered: ['activate_tool_source', {tools}, 'server_log']" in out
    assert f"offered after the activation: [{tools}, 'restart_service', 'server_log']" in out
    assert "agent> Freed the disk, restarted db." in out
    assert f"next run: strategy dynamic, offered: [{tools}, 'restart_service'" in out
    assert "history after the compaction: ['compaction']" in out
    assert "'row 0 (user, archived) line 1: The deploy token is XK-4471.'" in out
    assert "'row 1 (assistant, archived) line 1: Noted: XK-4471.'" in out
    assert "agent> It was XK-4471." in out


def test_example_features_on_sqlite(tmp_path: Path) -> None:
    assert (EXAMPLES / "openai_agents_features.py").exists()
    check(run_example("openai_agents_features.py", f"sqlite:///{tmp_path / 'features.db'}"))


def test_example_features_on_postgres(postgres_schema_url: str) -> None:
    check(run_example("openai_agents_features.py", postgres_schema_url))
