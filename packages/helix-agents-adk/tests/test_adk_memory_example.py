"""examples/adk_artifacts_memory.py runs offline: an artifact saved, a past session recalled."""

from __future__ import annotations

from pathlib import Path

from example_runs import run_example


def check(out: str) -> None:
    """What the example must have printed."""
    assert out.splitlines() == [
        "packer> Done: saved user:packing.txt version 0.",
        "archived 4 events of monday",
        "packer> From memory: Save my packing list: passport, charger, sunscreen",
        "friday's artifacts: ['user:packing.txt']",
        "user:packing.txt = 'passport, charger, sunscreen'",
    ]


def test_example_saves_an_artifact_and_recalls_a_past_session_on_sqlite(tmp_path: Path) -> None:
    check(run_example("adk_artifacts_memory.py", tmp_path / "memory.db"))


def test_example_saves_an_artifact_and_recalls_a_past_session_on_postgres(
    postgres_schema_url: str,
) -> None:
    check(run_example("adk_artifacts_memory.py", postgres_schema_url))
