"""``make demo`` (examples/agent_loop.py) ends with the next commands to type, and each of them
works when pasted into a shell in the directory the demo ran in."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "agent_loop.py"


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def _demo(cwd: Path) -> list[str]:
    """Run the demo in ``cwd``; the commands its last lines print, one per line."""
    done = subprocess.run(
        [sys.executable, str(DEMO)], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr + done.stdout
    _, marker, tail = done.stdout.partition("\nDone. Next, copy and paste any of these:\n")
    assert marker, done.stdout[-500:]
    return [line.removeprefix("    ") for line in tail.splitlines() if line.startswith("    ")]


def test_demo_prints_commands_that_work(tmp_path: Path) -> None:
    _demo(tmp_path)
    commands = _demo(tmp_path)  # a second run: a second trip, named in the commands
    cli = Path(sys.executable).parent / "helix-store"
    assert commands[:4] == [
        f"{cli} sessions sqlite:///helix-demo.db --user ada",
        f"{cli} show sqlite:///helix-demo.db trip-2",
        f"{cli} stats sqlite:///helix-demo.db --user ada",
        f"{cli} export sqlite:///helix-demo.db trip-2 > trip-2.jsonl",
    ]
    listed = _shell(commands[0], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"\btrip-1\b", listed.stdout) and re.search(r"\btrip-2\b", listed.stdout)
    shown = _shell(commands[1], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Booked: Saturday 08:04 to Lyon" in shown.stdout
    assert _shell(commands[2], tmp_path).returncode == 0
    exported = _shell(commands[3], tmp_path)
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in (tmp_path / "trip-2.jsonl").read_text().splitlines()]
    assert records, "the export wrote nothing"
    # From outside the repository, the make commands name it; each target exists.
    assert commands[4:6] == [f"make -C {ROOT} long-run", f"make -C {ROOT} test"]
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), re.M))
    assert {"long-run", "test"} <= targets
    assert commands[6] == "rm helix-demo.db*"
    assert _shell(commands[6], tmp_path).returncode == 0
    assert not list(tmp_path.glob("helix-demo.db*"))


def test_demo_from_the_repository_names_the_venv_relative() -> None:
    """Run as ``make demo`` runs it (from the repository, with .venv's python), the commands
    are the short ones a newcomer reads in the README: ``.venv/bin/helix-store …``."""
    venv_python = ROOT / ".venv" / "bin" / "python"
    script = (
        "import sys; sys.executable = sys.argv[1]; "
        "from examples.agent_loop import print_next_commands; print_next_commands('trip-1')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(venv_python)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "    .venv/bin/helix-store show sqlite:///helix-demo.db trip-1\n" in done.stdout
    assert "    make long-run\n" in done.stdout
