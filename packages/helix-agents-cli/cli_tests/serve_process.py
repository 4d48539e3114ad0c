"""``helix-store serve`` as a user starts it: a process on a free loopback port."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .conftest import HELIX_STORE

ADDRESS = re.compile(r"on (http://127\.0\.0\.1:\d+/)")


@dataclass
class Served:
    """A running server: its address, and (once it stopped) everything it printed."""

    base: str
    out: Path
    err: Path

    def output(self) -> str:
        """stdout and stderr so far."""
        return self.out.read_text() + self.err.read_text()


def _interruptible() -> None:
    # Ctrl-C as in a terminal: a runner started in the background (``nohup … &``) hands its
    # children SIGINT ignored, and the server would then stop on it without the exit code.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def served(
    url: str, logs: Path, *args: str, debug: bool = False, cwd: Path | None = None
) -> Iterator[Served]:
    """Run ``helix-store [--debug] serve URL --port 0 ARGS`` (in ``cwd``) until the block ends, then
    interrupt it as Ctrl-C does and check it stopped as every command does on Ctrl-C
    (exit 130, one line)."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "serve.out", logs / "serve.err"
    command = [str(HELIX_STORE), *(["--debug"] if debug else []), "serve", url, "--port", "0"]
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(
            [*command, *args],
            stdout=o,
            stderr=e,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            preexec_fn=_interruptible,
        )
    try:
        deadline = time.monotonic() + 30
        while (found := ADDRESS.search(out.read_text())) is None:
            assert proc.poll() is None, f"serve exited {proc.returncode}: {err.read_text()}"
            assert time.monotonic() < deadline, f"serve did not start: {err.read_text()}"
            time.sleep(0.05)
        yield Served(found.group(1), out, err)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert code == 130, f"serve exited {code}: {err.read_text()}"
    assert err.read_text().endswith("helix-store: interrupted\n"), err.read_text()
