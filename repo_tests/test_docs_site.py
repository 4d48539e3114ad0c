"""The documentation site builds with ``mkdocs build --strict`` (no broken link, no page
missing from the nav), and its API reference shows every public name of every package."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
# Packages whose framework is not in this environment (CrewAI pins mcp<2; CONTRIBUTING.md):
# their __all__ is read from the source, as the site's API reference reads them.
FROM_SOURCE = {"helix_agents.crewai": ROOT / "packages/helix-agents-crewai/src/helix_agents/crewai"}


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
    assert (site / "api" / "core.html").is_file()


def test_mermaid_fence_is_a_diagram(site: Path) -> None:
    """The architecture page's ```mermaid fence reaches the page as a diagram for material's
    mermaid.js, not as highlighted code."""
    html = (site / "architecture.html").read_text()
    diagram = re.search(r'<pre class="mermaid"><code>(.*?)</code></pre>', html, re.S)
    assert diagram, 'no <pre class="mermaid"> on the architecture page'
    assert diagram.group(1).startswith("flowchart TB"), diagram.group(1)[:80]
    assert "language-mermaid" not in html


def _pages(site: Path) -> list[Path]:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20, pages
    return pages


def test_nothing_loads_from_the_network(site: Path) -> None:
    """Opened from disk with no network, every page has its scripts, styles and fonts: none
    is fetched from a CDN (mermaid.js and the offline search's iframe-worker are ours)."""
    for page in _pages(site):
        html = page.read_text()
        loaded = re.findall(r'<(?:script|img|iframe)\b[^>]*\bsrc="([^"]+)"', html)
        loaded += re.findall(r'<link\b[^>]*\bhref="([^"]+)"[^>]*>', html)
        remote = [url for url in loaded if re.match(r"(?:https?:)?//", url)]
        assert not remote, f"{page.relative_to(site)} loads {remote}"
        assert "unpkg.com" not in html and "fonts.googleapis" not in html, page


def test_mermaid_is_bundled(site: Path) -> None:
    html = (site / "architecture.html").read_text()
    assert '<script src="assets/javascripts/mermaid.min.js"></script>' in html
    bundled = site / "assets" / "javascripts" / "mermaid.min.js"
    # The real library (a few MB, defining the global material looks for), and its license.
    assert bundled.stat().st_size > 1_000_000
    assert (
        bundled.read_text()
        .rstrip()
        .endswith('globalThis["mermaid"] = globalThis.__esbuild_esm_mermaid_nm["mermaid"].default;')
    )
    assert (
        (site / "assets" / "javascripts" / "mermaid.LICENSE.txt")
        .read_text()
        .startswith("The MIT License")
    )
    assert (site / "assets" / "javascripts" / "iframe-worker" / "shim.js").is_file()


def test_links_name_files_not_directories(site: Path) -> None:
    """Opened from disk (file://), a link to a directory shows a listing, not the page: every
    link between pages names its .html file."""
    for page in _pages(site):
        if page.name == "404.html":
            continue  # served by a web server for any path: its links start at the site's root
        for href in re.findall(r'<a\b[^>]*\bhref="([^"#]+)(?:#[^"]*)?"', page.read_text()):
            if re.match(r"[a-z]+:", href):
                continue  # another site, mailto:
            target = (page.parent / href).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to {href}"


def test_search_works_from_disk(site: Path) -> None:
    """The offline plugin inlines the search index as a script (no fetch, which file:// refuses)."""
    assert (site / "search" / "search_index.js").is_file()


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
    html = (site / "api" / f"{page}.html").read_text()
    shown = set(re.findall(rf'id="{re.escape(module)}\.(\w+)"', html))
    if module in FROM_SOURCE:
        tree = ast.parse((FROM_SOURCE[module] / "__init__.py").read_text())
        (public,) = [
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
        ]
    else:
        public = importlib.import_module(module).__all__
    # mkdocstrings leaves out a name without a docstring: every public name needs one.
    missing = [name for name in public if name not in shown]
    assert not missing, f"{module}: {missing} missing from docs/api/{page}.md (no docstring?)"
