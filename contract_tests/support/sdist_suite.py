"""A framework's own tests, from its sdist, run against one of our adapters on one backend.

The tests come from the sdist of the installed release of the distribution: found
through the package index's PEP 691 JSON API (as pip and uv read it;
``UV_DEFAULT_INDEX`` or ``PIP_INDEX_URL`` name another index than PyPI), its sha256
checked against the index's, and unpacked into ``$XDG_CACHE_HOME/helix-agents/``
(``~/.cache`` by default): outside the repository, nothing of theirs is copied into it.
They run in a child pytest with :mod:`sdist_plugin` (counts, deselection, a per-test
timeout) and the adapter's own plugin, which swaps the framework's stores for ours.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from helix_backends import BACKENDS

__all__ = ["BACKENDS", "Suite", "cache_root", "chosen_backends", "sdist_tests"]

BACKENDS_ENV = "HELIX_FRAMEWORK_SUITE_BACKENDS"
# `make test` runs each framework's suite on the embedded default; `make frameworks-all`
# (nightly) on all four. The adapters do not branch on the backend: what differs between
# backends is the contract suite's to check, on every backend, every run.
DEFAULT_BACKENDS = ("sqlite",)

PYPI = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # the index's JSON API (PEP 691)
SUPPORT = Path(__file__).resolve().parent


def chosen_backends() -> tuple[str, ...]:
    """The backends the frameworks' suites run on: ``$HELIX_FRAMEWORK_SUITE_BACKENDS``
    (``all`` or a comma-separated list), else :data:`DEFAULT_BACKENDS`."""
    chosen = os.environ.get(BACKENDS_ENV, "").strip()
    if not chosen:
        return DEFAULT_BACKENDS
    if chosen == "all":
        return BACKENDS
    names = tuple(name.strip() for name in chosen.split(","))
    unknown = [name for name in names if name not in BACKENDS]
    if unknown:
        raise ValueError(f"{BACKENDS_ENV}: unknown backend(s) {unknown}; of {BACKENDS}")
    return names


def cache_root() -> Path:
    """Where sdists are unpacked: ``$XDG_CACHE_HOME/helix-agents`` or ``~/.cache/helix-agents``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "helix-agents"


def sdist_tests(distribution: str) -> Path:
    """The unpacked sdist of the installed release of ``distribution``, fetched once."""
    version = importlib.metadata.version(distribution)
    target = cache_root() / f"{distribution}-{version}"
    if (target / "PKG-INFO").is_file():
        _check_version(target, distribution, version)
        return target
    index = os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("PIP_INDEX_URL") or PYPI
    request = urllib.request.Request(
        f"{index.rstrip('/')}/{distribution}/", headers={"Accept": SIMPLE_JSON}
    )
    with urllib.request.urlopen(request) as r:
        files = json.load(r)["files"]
    # PEP 625 names an sdist by the normalised name; older uploads by the project's own.
    stems = {re.sub(r"[-_.]+", "_", distribution).lower(), distribution}
    names = {f"{stem}-{version}.tar.gz": stem for stem in stems}
    sdist = next(f for f in files if f["filename"] in names)
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
            (Path(tmp) / f"{names[sdist['filename']]}-{version}").rename(target)
        except OSError:
            if not (target / "PKG-INFO").is_file():  # another run unpacked it at the same time
                raise
    _check_version(target, distribution, version)
    return target


def _unpack(tar: tarfile.TarFile, into: Path) -> None:
    """Extract ``tar`` into ``into``, nothing outside it."""
    if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: the standard library's checks
        tar.extractall(into, filter="data")
        return
    # Older Pythons have no extraction filters: plain files and directories only, each
    # named inside ``into``.
    members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
    for member in members:
        if member.name.startswith("/") or ".." in Path(member.name).parts:
            raise SystemExit(f"{member.name}: a path outside the sdist's directory")
    tar.extractall(into, members=members)


def _check_version(root: Path, distribution: str, version: str) -> None:
    for line in (root / "PKG-INFO").read_text().splitlines():
        if line.startswith("Version:"):
            if line.split(":", 1)[1].strip() != version:
                raise SystemExit(f"{root} holds {line}, not {distribution} {version}")
            return
    raise SystemExit(f"{root}/PKG-INFO names no version")


@dataclass(frozen=True)
class Suite:
    """One framework's tests against one adapter.

    ``plugin`` is the adapter's pytest plugin (a module in ``plugin_dir``) that swaps the
    framework's stores for ours; ``deselect`` is the checked-in list of what does not run
    and why: a test file (left out of collection) or a node id, then `` # `` and the reason.
    """

    distribution: str
    test_paths: tuple[str, ...]
    plugin: str
    plugin_dir: Path
    deselect: Path
    pytest_args: tuple[str, ...] = ()

    def deselected_files(self) -> list[str]:
        """The test files ``deselect`` names whole (their tests are not even imported)."""
        files = []
        for line in self.deselect.read_text().splitlines():
            node = line.partition(" # ")[0].strip()
            if node and not line.startswith("#") and "::" not in node:
                files.append(node)
        return files

    def run(self, backend: str, *pytest_args: str) -> dict[str, int]:
        """Run the tests on ``backend``; their counts by outcome, and the exit status."""
        root = sdist_tests(self.distribution)
        ignored = self.deselected_files()
        for file in ignored:
            if not (root / file).is_file():
                raise SystemExit(f"{self.deselect.name} names {file}, which the sdist lacks")
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "report.json"
            path = [str(self.plugin_dir), str(SUPPORT), str(root)]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
            command = [
                sys.executable,
                "-m",
                "pytest",
                "-c",
                str(root / "pyproject.toml"),
                "--rootdir",
                str(root),
                *self.pytest_args,
                "-p",
                "sdist_plugin",
                "-p",
                self.plugin,
                "--helix-backend",
                backend,
                "--helix-report",
                str(report),
                "--helix-deselect",
                str(self.deselect),
                "-p",
                "no:cacheprovider",
                "-q",
                "--no-header",
                "-rfE",
                *(f"--ignore={file}" for file in ignored),
                *pytest_args,
                *(() if any(a.startswith("tests/") for a in pytest_args) else self.test_paths),
            ]
            proc = subprocess.run(command, cwd=root, env=env, check=False)
            counts: dict[str, int] = json.loads(report.read_text()) if report.exists() else {}
        counts["deselected_files"] = len(ignored)
        counts["exit"] = proc.returncode
        return counts

    def describe(self, what: str, backend: str, counts: dict[str, int]) -> str:
        """One line of counts: ``what`` names the tests and the adapter."""
        extra = f" ({counts['on_helix']} of them on ours)" if "on_helix" in counts else ""
        return (
            f"{self.distribution} {importlib.metadata.version(self.distribution)} {what}/"
            f"{backend}: {counts.get('passed', 0)} passed{extra}, "
            f"{counts.get('failed', 0)} failed, {counts.get('skipped', 0)} skipped, "
            f"{counts.get('deselected', 0)} deselected + {counts['deselected_files']} files "
            f"(exit {counts['exit']})"
        )

    def main(self, what: str, argv: Sequence[str]) -> int:
        """``[BACKEND,BACKEND|all] [pytest args]``: run on each backend, print the counts."""
        chosen = argv[0] if argv else "all"
        backends = list(BACKENDS) if chosen == "all" else chosen.split(",")
        lines, status = [], 0
        for backend in backends:
            counts = self.run(backend, *argv[1:])
            status = status or counts["exit"]
            lines.append(self.describe(what, backend, counts))
        print("\n".join(lines))
        return status
