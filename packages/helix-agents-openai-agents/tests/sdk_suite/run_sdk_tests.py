"""Run the OpenAI Agents SDK's own session tests against HelixSession on one or more backends.

``python run_sdk_tests.py [memory,sqlite,postgres,redis|all] [pytest args]``.

The tests come from the sdist of the installed ``openai-agents`` version,
downloaded from the package index (its PEP 691 JSON API, as pip and uv read it;
``UV_DEFAULT_INDEX`` or ``PIP_INDEX_URL`` name another index than PyPI), its
sha256 checked against the index's, and unpacked into
``$XDG_CACHE_HOME/helix-agents/openai-agents-<version>/`` (``~/.cache`` by
default): outside the repository, nothing of theirs is copied into it. Prints
one line of counts per backend; the exit status is non-zero if any test failed.
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
DISTRIBUTION = "openai-agents"
# The SDK's test files about sessions: everything they build is swapped or deselected.
TEST_PATHS = ("tests/memory", "tests/extensions/memory")
BACKENDS = ("memory", "sqlite", "postgres", "redis")
PYPI = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # the index's JSON API (PEP 691)


def cache_root() -> Path:
    """Where sdists are unpacked: ``$XDG_CACHE_HOME/helix-agents`` or ``~/.cache/helix-agents``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "helix-agents"


def _unpack(tar: tarfile.TarFile, into: Path) -> None:
    """Extract ``tar`` into ``into``, nothing outside it."""
    if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: the standard library's checks
        tar.extractall(into, filter="data")
        return
    # Older Pythons have no extraction filters: plain files and directories only (the
    # sdist's one link is a document the tests never read), each named inside ``into``.
    members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
    for member in members:
        if member.name.startswith("/") or ".." in Path(member.name).parts:
            raise SystemExit(f"{member.name}: a path outside the sdist's directory")
    tar.extractall(into, members=members)


def sdk_tests(version: str | None = None) -> Path:
    """The unpacked sdist of ``version`` (default: the installed one), fetched once."""
    installed = importlib.metadata.version(DISTRIBUTION)
    version = version or installed
    if version != installed:
        raise SystemExit(f"{DISTRIBUTION} {installed} is installed, not {version}")
    target = cache_root() / f"openai-agents-{version}"
    if (target / "PKG-INFO").is_file():
        _check_version(target, version)
        return target
    index = os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("PIP_INDEX_URL") or PYPI
    request = urllib.request.Request(
        f"{index.rstrip('/')}/{DISTRIBUTION}/", headers={"Accept": SIMPLE_JSON}
    )
    with urllib.request.urlopen(request) as r:
        files = json.load(r)["files"]
    name = f"openai_agents-{version}.tar.gz"
    sdist = next(f for f in files if f["filename"] == name)
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
        unpacked = Path(tmp) / f"openai_agents-{version}"
        try:
            unpacked.rename(target)
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


def deselected_files() -> list[str]:
    """The test files deselect.txt names whole (their tests are not even imported)."""
    files = []
    for line in (HERE / "deselect.txt").read_text().splitlines():
        node = line.partition(" # ")[0].strip()
        if node and not line.startswith("#") and "::" not in node:
            files.append(node)
    return files


def run(backend: str, *pytest_args: str) -> dict[str, int]:
    """Run the SDK's session tests on ``backend``; their counts by outcome."""
    root = sdk_tests()
    ignored = deselected_files()
    for file in ignored:
        if not (root / file).is_file():
            raise SystemExit(f"deselect.txt names {file}, which the sdist does not hold")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(root)])}
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "helix_sdk_plugin",
            "--helix-backend",
            backend,
            "--helix-report",
            str(report),
            "-c",
            str(root / "pyproject.toml"),
            "--rootdir",
            str(root),
            "-p",
            "no:cacheprovider",
            # Their session tests take no snapshots; its end-of-run parse of every test
            # file at times trips CPython 3.11's "AST constructor recursion depth
            # mismatch" SystemError (cf. gh-106905) and fails a green run.
            "--inline-snapshot=disable",
            "-q",
            "--no-header",
            "-rfE",
            *(f"--ignore={file}" for file in ignored),
            *pytest_args,
            *(() if any(a.startswith("tests/") for a in pytest_args) else TEST_PATHS),
        ]
        proc = subprocess.run(command, cwd=root, env=env, check=False)
        counts: dict[str, int] = json.loads(report.read_text()) if report.exists() else {}
    counts["deselected_files"] = len(ignored)
    counts["exit"] = proc.returncode
    return counts


def describe(backend: str, counts: dict[str, int]) -> str:
    """One line of counts."""
    return (
        f"openai-agents {importlib.metadata.version(DISTRIBUTION)} session tests on "
        f"HelixSession/{backend}: {counts.get('passed', 0)} passed, "
        f"{counts.get('failed', 0)} failed, {counts.get('skipped', 0)} skipped, "
        f"{counts.get('deselected', 0)} deselected + {counts['deselected_files']} files "
        f"(exit {counts['exit']})"
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
