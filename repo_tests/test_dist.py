"""``make dist`` builds a wheel of every distribution, and the README's install line and
quick-start block work with them in a bare virtual environment, offline.

The README says ``pip install --find-links dist/ NAMES``: pip fetches the third-party
dependencies (pydantic, …) from PyPI. A test has no network, so those come first from uv's
cache, at the lock's versions (``uv export`` of the named distributions, then ``uv pip
install --offline``: the wheels the synced workspace was installed from); then the venv's
own pip installs the README's NAMES with ``--no-index --find-links`` on the built wheels,
so pip itself must find our wheels in dist/ and see every requirement met. The build runs
once per module (about 5 s).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = sorted([*ROOT.glob("packages/*/pyproject.toml"), ROOT / "contract_tests/pyproject.toml"])
NAMES = sorted(tomllib.loads(p.read_text())["project"]["name"] for p in PROJECTS)
README = (ROOT / "README.md").read_text()


def _run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, f"{shlex.join(map(str, args))}:\n{done.stderr}{done.stdout}"
    return done.stdout


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(uv).is_file(), "uv is needed to build the distributions (make install provides it)"
    return uv


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("make-dist") / "dist"
    out.mkdir()
    (out / "stale.whl").write_text("left from an earlier build")
    _run("make", "--no-print-directory", "-C", ROOT, "dist", f"DIST={out}", f"UV={_uv()}")
    return out


def test_make_dist_builds_every_wheel_afresh(dist: Path) -> None:
    built = sorted(dist.glob("*.whl"))  # uv writes a .gitignore beside them
    assert not (dist / "stale.whl").exists()
    names = sorted(re.sub(r"-[^-]+-py3-none-any\.whl$", "", p.name) for p in built)
    assert names == [n.replace("-", "_") for n in NAMES], [p.name for p in built]


def _readme_install() -> list[str]:
    """The distributions the README's ``pip install --find-links dist/`` line names."""
    (line,) = re.findall(r"^pip install --find-links dist/ (.+)$", README, re.M)
    return shlex.split(line, comments=True)


def _readme_quick_start() -> str:
    section = README.split("## Install a backend", 1)[1]
    found = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S)
    assert found, "no python block under 'Install a backend'"
    return found.group(1)


def test_readme_install_and_quick_start_in_a_bare_venv(dist: Path, tmp_path: Path) -> None:
    names = _readme_install()
    assert names[:2] == ["helix-agents-core", "helix-agents-store-sqlite"], names
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "venv", venv)  # with the pip that ensurepip bundles
    # Third-party dependencies from uv's cache at the lock's versions (see above).
    lock = tmp_path / "pylock.toml"
    export = ("export", "--quiet", "--frozen", "--no-default-groups", "--no-emit-workspace")
    packages = [arg for name in names for arg in ("--package", name)]
    _run(_uv(), *export, *packages, "--format", "pylock.toml", "--output-file", lock)
    _run(_uv(), "pip", "install", "--quiet", "--offline", "--python", python, "-r", lock)
    assert "helix-agents" not in _run(python, "-m", "pip", "list")
    # The README's line, offline: our wheels from dist/, nothing from an index.
    pip = (python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check")
    _run(*pip, "--no-index", "--find-links", dist, *names)
    _run(python, "-m", "pip", "check")
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    where = _run(python, "-c", "import helix_agents.core as m; print(m.__file__)", env=env)
    assert where.startswith(str(venv)), where  # the wheel's copy, not the workspace's
    script = tmp_path / "quick_start.py"
    script.write_text(_readme_quick_start())
    _run(python, script, cwd=tmp_path, env=env)
    assert (tmp_path / "agent.db").is_file()  # the block's sqlite:///agent.db
