"""Run the MCP SDK's own resumability tests against HelixEventStore on one or more backends.

``python run_mcp_sdk_tests.py [memory,sqlite,postgres,redis|all] [pytest args]``.

The tests come from the sdist of the installed ``mcp`` version, fetched, checked and
unpacked outside the repository exactly as the OpenAI adapter's SDK suite does
(``run_sdk_tests.py`` there: the index's PEP 691 JSON API, its sha256, the cache under
``$XDG_CACHE_HOME/helix-agents/``); nothing of theirs is copied into the repository.
``helix_mcp_plugin.py`` swaps the event stores those tests build for HelixEventStore;
``deselect.txt`` names what does not run and why. Prints one line of counts per backend;
the exit status is non-zero if any test failed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The OpenAI adapter's suite helpers: the sdist fetch and the test stores (helix_backends.py).
OAI_SUITE = HERE.parents[2] / "helix-agents-openai-agents" / "tests" / "sdk_suite"
if str(OAI_SUITE) not in sys.path:
    sys.path.append(str(OAI_SUITE))

from run_sdk_tests import PYPI, SIMPLE_JSON, _unpack, cache_root  # noqa: E402

DISTRIBUTION = "mcp"
# The SDK's test files with event stores: streamable HTTP, its resumability and hosting.
TEST_PATHS = (
    "tests/shared/test_streamable_http.py",
    "tests/interaction/transports/test_hosting_resume.py",
    "tests/interaction/transports/test_client_transport_http.py",
    "tests/server/test_streamable_http_router.py",
)
BACKENDS = ("memory", "sqlite", "postgres", "redis")


def sdk_tests() -> Path:
    """The unpacked sdist of the installed ``mcp``, fetched once."""
    version = importlib.metadata.version(DISTRIBUTION)
    target = cache_root() / f"mcp-{version}"
    if (target / "PKG-INFO").is_file():
        _check_version(target, version)
        return target
    index = os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("PIP_INDEX_URL") or PYPI
    request = urllib.request.Request(
        f"{index.rstrip('/')}/{DISTRIBUTION}/", headers={"Accept": SIMPLE_JSON}
    )
    with urllib.request.urlopen(request) as r:
        files = json.load(r)["files"]
    sdist = next(f for f in files if f["filename"] == f"mcp-{version}.tar.gz")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = Path(tmp) / sdist["filename"]
        with urllib.request.urlopen(sdist["url"]) as r, archive.open("wb") as out:
            shutil.copyfileobj(r, out)
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != sdist["hashes"]["sha256"]:
            raise SystemExit(f"{sdist['filename']}: sha256 {digest} is not the index's")
        with tarfile.open(archive) as tar:
            _unpack(tar, Path(tmp))
        try:
            (Path(tmp) / f"mcp-{version}").rename(target)
        except OSError:
            if not (target / "PKG-INFO").is_file():  # another run unpacked it at the same time
                raise
    _check_version(target, version)
    return target


def _check_version(root: Path, version: str) -> None:
    for line in (root / "PKG-INFO").read_text().splitlines():
        if line.startswith("Version:"):
            if line.split(":", 1)[1].strip() != version:
                raise SystemExit(f"{root} holds {line}, not {DISTRIBUTION} {version}")
            return
    raise SystemExit(f"{root}/PKG-INFO names no version")


def run(backend: str, *pytest_args: str) -> dict[str, int]:
    """Run the SDK's tests on ``backend``; their counts by outcome."""
    root = sdk_tests()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(OAI_SUITE), str(root)])}
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(root / "pyproject.toml"),
            "--rootdir",
            str(root),
            # Their addopts load pytest-examples (for their docs tests, not run here):
            # the same options without it.
            "-o",
            "addopts=",
            "-p",
            "anyio",
            # In the venv for the OpenAI SDK's tests; these run on anyio's plugin.
            "-p",
            "no:asyncio",
            "-p",
            "helix_mcp_plugin",
            "--helix-backend",
            backend,
            "--helix-report",
            str(report),
            "-p",
            "no:cacheprovider",
            "--inline-snapshot=disable",
            "-q",
            "--no-header",
            "-rfE",
            *pytest_args,
            *(() if any(a.startswith("tests/") for a in pytest_args) else TEST_PATHS),
        ]
        proc = subprocess.run(command, cwd=root, env=env, check=False)
        counts: dict[str, int] = json.loads(report.read_text()) if report.exists() else {}
    counts["exit"] = proc.returncode
    return counts


def describe(backend: str, counts: dict[str, int]) -> str:
    """One line of counts."""
    return (
        f"mcp {importlib.metadata.version(DISTRIBUTION)} streamable-HTTP tests on "
        f"HelixEventStore/{backend}: {counts.get('passed', 0)} passed "
        f"({counts.get('on_helix', 0)} of them on HelixEventStore), "
        f"{counts.get('failed', 0)} failed, {counts.get('skipped', 0)} skipped, "
        f"{counts.get('deselected', 0)} deselected (exit {counts['exit']})"
    )


def main(argv: list[str]) -> int:
    """``[BACKEND,BACKEND|all] [pytest args]``: run on each backend, print the counts."""
    chosen = argv[0] if argv else "all"
    backends = list(BACKENDS) if chosen == "all" else chosen.split(",")
    lines, status = [], 0
    for backend in backends:
        counts = run(backend, *argv[1:])
        status = status or counts["exit"]
        lines.append(describe(backend, counts))
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
