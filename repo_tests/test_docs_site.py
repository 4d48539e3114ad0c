"""The documentation site builds with ``mkdocs build --strict`` (no broken link, no page
missing from the nav), and its API reference shows every public name of every package."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return out


def test_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "api" / "core" / "index.html").is_file()


def test_mermaid_fence_is_a_diagram(site: Path) -> None:
    """The architecture page's ```mermaid fence reaches the page as a diagram for material's
    mermaid.js, not as highlighted code."""
    html = (site / "architecture" / "index.html").read_text()
    diagram = re.search(r'<pre class="mermaid"><code>(.*?)</code></pre>', html, re.S)
    assert diagram, 'no <pre class="mermaid"> on the architecture page'
    assert diagram.group(1).startswith("flowchart TB"), diagram.group(1)[:80]
    assert "language-mermaid" not in html


def _api_pages() -> list[tuple[str, str]]:
    pages = []
    for page in sorted(API.glob("*.md")):
        pages += [(page.stem, m) for m in re.findall(r"^::: (\S+)$", page.read_text(), re.M)]
    return pages


def test_every_distribution_has_an_api_page() -> None:
    documented = {module for _, module in _api_pages()}
    inits = [*ROOT.glob("packages/*/src/helix_agents/*/__init__.py")]
    inits += ROOT.glob("contract_tests/src/helix_agents/*/__init__.py")
    packages = {f"helix_agents.{init.parent.name}" for init in inits}
    assert packages, "no package found"
    assert packages <= documented, f"no API page for {sorted(packages - documented)}"


@pytest.mark.parametrize(("page", "module"), _api_pages())
def test_api_page_shows_every_public_name(site: Path, page: str, module: str) -> None:
    html = (site / "api" / page / "index.html").read_text()
    shown = set(re.findall(rf'id="{re.escape(module)}\.(\w+)"', html))
    public = importlib.import_module(module).__all__
    # mkdocstrings leaves out a name without a docstring: every public name needs one.
    missing = [name for name in public if name not in shown]
    assert not missing, f"{module}: {missing} missing from docs/api/{page}.md (no docstring?)"
