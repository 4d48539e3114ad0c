"""The server of ``warm_python``: imports the heavy libraries once, then forks a child per run.

Requests are JSON lines on stdin; for each the server answers the child's pid, then its exit
code, one line each. A child points fds 0-2 at the request's files (the
server never used ``sys.stdin``/``sys.stdout``: they hold nothing), takes its argv, cwd,
environment and ``sys.path[0]`` as ``python`` would give them, runs its target as
``__main__`` and ends as the interpreter would end it (an uncaught exception's traceback
and status 1, ``sys.exit``'s status, the ``atexit`` handlers, flushed outputs).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import runpy
import sys
import traceback
from typing import Any

# Libraries only: none of them reads the environment or the terminal when imported, so a
# child sees its own (an application module, e.g. the CLI's, is imported by the child).
PRELOAD = (
    "pydantic",
    "typer",
    "rich.console",
    "helix_agents.core",
    "helix_agents.store_sqlite",
    "helix_agents.store_postgres",
    "helix_agents.store_redis",
    "agents",
    "langgraph.graph",
    "google.adk.runners",
)


def _child(request: dict[str, Any]) -> None:
    os.setsid()  # a timeout kills the run's own subprocesses with it
    for fd, (path, flags) in enumerate(
        (
            (request["stdin"], os.O_RDONLY),
            (request["stdout"], os.O_WRONLY | os.O_TRUNC),
            (request["stderr"], os.O_WRONLY | os.O_TRUNC),
        )
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        _target(request)
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    else:
        code = 0
    # What the interpreter's exit does that a run can see, without tearing down the
    # preloaded modules (a second or more): exit handlers, then flushed outputs.
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    os._exit(code)


def _exit_code(code: object) -> int:
    """The status ``sys.exit(code)`` gives a process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _target(request: dict[str, Any]) -> None:
    kind, target, args = request["kind"], request["target"], request["args"]
    if kind == "path":
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        runpy.run_path(target, run_name="__main__")
    else:
        module, _, function = target.partition(":")
        sys.argv = [request["argv0"], *args]
        sys.path[0] = os.path.dirname(request["argv0"])
        sys.exit(getattr(importlib.import_module(module), function)())


def main() -> None:
    """Serve runs until stdin closes."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(quiet, fd)
    for name in PRELOAD:
        # An environment without one of them (a lowest-release overlay, say) imports it in
        # each child that needs it, as a fresh interpreter would.
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    replies.write("ready\n")
    for line in requests:
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            _child(json.loads(line))
        replies.write(f"{pid}\n")
        _, status = os.waitpid(pid, 0)
        replies.write(f"{os.waitstatus_to_exitcode(status)}\n")


if __name__ == "__main__":
    main()
