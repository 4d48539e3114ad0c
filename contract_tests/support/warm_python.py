"""Python runs of the tests in a fork of one warmed interpreter instead of a fresh one.

The docs' blocks, the examples and ``helix-store`` each run as ``python`` would run them,
and most of each fresh run went into importing pydantic, the SDKs and the store drivers
(1-5 s on the 2-core CI machine). ``warm_server.py`` imports those libraries once and forks
a child per run; the child gets the run's argv, cwd, environment, stdin and outputs, runs
its target as ``__main__`` and exits through the interpreter. What a library does at
import therefore happens once, before the run's environment exists: the server imports
libraries only, none of which reads the environment or the terminal at import (the
application modules themselves, e.g. the CLI, are imported by each child). Tests of a
process's own behaviour (signals, a second process on one file) keep real subprocesses.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

_SERVER = Path(__file__).with_name("warm_server.py")


class _Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(_SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lock = threading.Lock()
        assert self._line(None) == "ready", "the warm interpreter did not start"

    def _line(self, timeout: float | None) -> str | None:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                return None
        line = self.process.stdout.readline()
        assert line, f"the warm interpreter ended (status {self.process.poll()})"
        return line.strip()

    def run(self, request: dict[str, object], timeout: float) -> int:
        assert self.process.stdin is not None
        with self.lock:
            self.process.stdin.write(json.dumps(request) + "\n")
            pid = int(self._line(None) or "")
            code = self._line(timeout)
            if code is None:
                os.killpg(pid, signal.SIGKILL)
                self._line(None)
                raise subprocess.TimeoutExpired(str(request["target"]), timeout)
            return int(code)

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


_server: _Server | None = None


def _warm() -> _Server:
    global _server
    if _server is None or _server.process.poll() is not None:
        _server = _Server()
        atexit.register(_server.close)
    return _server


def _run(
    request: dict[str, object],
    argv: list[str],
    *,
    cwd: Path | str | None,
    env: Mapping[str, str] | None,
    input: str,
    timeout: float,
) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="warm-") as scratch:
        files = {name: Path(scratch, name) for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(input, encoding="utf-8")
        for name in ("stdout", "stderr"):
            files[name].touch()
        request |= {
            "cwd": str(Path(cwd or os.getcwd()).resolve()),
            "env": dict(os.environ if env is None else env),
            **{name: str(path) for name, path in files.items()},
        }
        code = _warm().run(request, timeout)
        out, err = (
            files[name].read_text(encoding="utf-8", errors="replace")
            for name in ("stdout", "stderr")
        )
    return subprocess.CompletedProcess(argv, code, out, err)


def run_python(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str = "",
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """What ``python *args`` (a script's path, then its arguments) exits with and prints,
    text mode, as ``subprocess.run`` would capture it."""
    request: dict[str, object] = {"kind": "path", "target": str(args[0]), "args": [*args[1:]]}
    argv = [sys.executable, *args]
    return _run(request, argv, cwd=cwd, env=env, input=input, timeout=timeout)


def run_entry_point(
    script: Path,
    entry: str,
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str = "",
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """The installed console ``script`` (its ``module:function`` is ``entry``) run with
    ``args``, as :func:`run_python` runs a script."""
    request: dict[str, object] = {
        "kind": "entry",
        "target": entry,
        "argv0": str(script),
        "args": [*args],
    }
    return _run(request, [str(script), *args], cwd=cwd, env=env, input=input, timeout=timeout)
