"""Progress bars of ``export`` and ``import``: drawn on stderr when it is a terminal.

stderr is a real pseudo-terminal here; stdout a file, which must hold only the data.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from .conftest import HELIX_STORE, Helix
from .seed import seed

pytestmark = pytest.mark.anyio
SCOPE = ("--user", "alice", "--user", "bob", "orphan")


def _stderr_on_a_terminal(*args: str, out: Path) -> tuple[int, str]:
    """Run ``helix-store args`` with stdout into ``out`` and stderr on a pty; what it drew."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    with out.open("wb") as stdout:
        proc = subprocess.Popen([str(HELIX_STORE), *args], stdout=stdout, stderr=follower, env=env)
    os.close(follower)
    drawn = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command closed the terminal (it exited)
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    return proc.wait(timeout=120), drawn.decode("utf-8", "replace")


async def test_export_and_import_draw_a_bar_on_a_terminal(
    helix: Helix, sqlite_url: str, tmp_path: Path
) -> None:
    await seed(sqlite_url)
    file = tmp_path / "all.jsonl"
    code, drawn = _stderr_on_a_terminal("export", sqlite_url, *SCOPE, out=file)
    assert code == 0, drawn
    assert "export" in drawn and "4/4" in drawn, drawn
    records = [json.loads(line) for line in file.read_text("utf-8").splitlines()]
    assert records[-1]["type"] == "end" and records[-1]["sessions"] == 4  # no bar in the data

    target = f"sqlite:///{tmp_path / 'copy.db'}"
    code, drawn = _stderr_on_a_terminal("import", target, str(file), out=tmp_path / "out.txt")
    assert code == 0, drawn
    assert "import" in drawn and "4/4" in drawn, drawn


async def test_no_bar_when_stderr_is_a_pipe(helix: Helix, sqlite_url: str) -> None:
    await seed(sqlite_url)
    done = helix("export", sqlite_url, *SCOPE)
    assert done.code == 0 and done.err == ""
