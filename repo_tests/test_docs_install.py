"""Every page of the docs (and the README) whose ```python blocks run states, above each of
them, the ``pip install`` line it needs: each ``helix_agents`` package a block imports, the
backend of each store URL it opens, and every third-party module it imports, which the named
distributions must bring (their declared requirements, transitively, as installed here).

A reader who copies the page's install line and then its blocks has what the blocks import.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import re
import shlex
import sys
import tokenize
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from crewai_overlay import USES_CREWAI, overlay
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)
SCHEMES = {
    "sqlite": "helix-agents-store-sqlite",
    "memory": "helix-agents-store-memory",
    "postgres": "helix-agents-store-postgres",
    "postgresql": "helix-agents-store-postgres",
    "redis": "helix-agents-store-redis",
    "rediss": "helix-agents-store-redis",
    "redis+cluster": "helix-agents-store-redis",
}
# pip options that take a value (the value is not a distribution).
VALUED = frozenset(("--find-links", "-f", "--index-url", "-i", "--extra-index-url", "-c", "-r"))


def _fences(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(page.read_text())]


def _installed_by(console: str) -> list[Requirement]:
    """The requirements the ``pip install`` lines of a console block name, with the backends
    its comment offers instead (``helix-agents-store-sqlite   # or -postgres, -redis``)."""
    named = []
    for line in console.splitlines():
        words = shlex.split(line, comments=True)
        if words[:2] != ["pip", "install"]:
            continue
        _, _, comment = line.partition("#")
        if comment.strip().startswith("or -"):
            alternatives = re.findall(r"-([a-z]+)", comment)
            named += [Requirement(f"helix-agents-store-{a}") for a in alternatives]
        skip = False
        for word in words[2:]:
            if skip or word.startswith("-"):
                skip = word in VALUED
                continue
            named.append(Requirement(word))
    return named


def _needs(code: str) -> set[str]:
    """What a block needs installed: distributions (``helix-agents-…``) and top-level modules."""
    needs: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "helix_agents":
                needs.add("helix-agents-" + parts[1].replace("_", "-"))
            elif parts[0] not in sys.stdlib_module_names and parts[0] != "__future__":
                needs.add(module)
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING:
            found = re.match(r"[rbfu]*['\"]([a-z+]+)://", token.string, re.I)
            if found and found.group(1) in SCHEMES:
                needs.add(SCHEMES[found.group(1)])
    return needs


@cache
def _files_of(dist: str) -> frozenset[str]:
    """The paths distribution ``dist`` installed, as installed here."""
    return frozenset(str(f) for f in metadata.files(dist) or ())


def _provides(dist: str, module: str) -> bool:
    """Whether ``dist`` holds ``module`` itself: ``langgraph.graph`` is langgraph's, not the
    ``langgraph`` namespace's other distributions'."""
    path = module.replace(".", "/")
    return bool({f"{path}.py", f"{path}/__init__.py"} & _files_of(dist)) or any(
        f.startswith(f"{path}/") for f in _files_of(dist)
    )


def _closure(named: list[Requirement]) -> set[str]:
    """The distributions ``named`` install: each, and what it requires, transitively."""
    todo = [(canonicalize_name(r.name), frozenset(r.extras)) for r in named]
    seen: set[str] = set()
    while todo:
        name, extras = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": extra}) for extra in extras | {""}
            )
            if wanted:
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return seen


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if any(lang == "python" for lang, _ in _fences(p))]


# Pages another change owns, still to be given their line (strict: passing fails the run).
PENDING: dict[Path, str] = {}


def _params() -> list[object]:
    return [
        pytest.param(
            p,
            id=str(p.relative_to(ROOT)),
            marks=[pytest.mark.xfail(strict=True, reason=PENDING[p])] if p in PENDING else [],
        )
        for p in _pages_with_code()
    ]


def test_pages_found() -> None:
    assert len(_pages_with_code()) >= 10


def _uses_crewai(page: Path) -> bool:
    return any(
        line.startswith(USES_CREWAI)
        for lang, text in _fences(page)
        if lang == "python"
        for line in text.splitlines()
    )


@pytest.mark.parametrize("page", _params())
def test_page_states_its_install_line(page: Path) -> None:
    """Each python block is covered by the ``pip install`` lines above it on its page."""
    where = page.relative_to(ROOT)
    if _uses_crewai(page) and importlib.util.find_spec("crewai") is None:
        # What is installed is read from the environment: CrewAI's page is checked where
        # CrewAI is (contract_tests/support/crewai_overlay.py), by this same test.
        done = overlay(
            "python", "-m", "pytest", __file__, "-q", "-p", "no:randomly", "-k", page.name
        )
        passed = re.search(r"^1 passed\b", done.stdout, re.M)
        assert done.returncode == 0 and passed, done.stdout[-3000:]
        return
    named: list[Requirement] = []
    for index, (lang, text) in enumerate(_fences(page), 1):
        if lang == "console":
            named += _installed_by(text)
            continue
        if lang != "python":
            continue
        assert named, f"{where}: no `pip install` line before its first python block"
        installed = _closure(named)
        needs = _needs(text)
        ours = {n for n in needs if n.startswith("helix-agents-")}
        lacks = sorted(ours - installed)
        assert not lacks, f"{where}, block {index}: the install lines above it lack {lacks}"
        missing = sorted(m for m in needs - ours if not any(_provides(d, m) for d in installed))
        assert not missing, f"{where}, block {index}: no install line above it brings {missing}"


def test_install_lines_are_read() -> None:
    """The parser sees names, extras and options as pip does (a wrong parse passes any page)."""
    got = _installed_by(
        "make dist\npip install --find-links dist/ 'helix-agents-core[otel]' x  # y z\n"
    )
    assert [(r.name, r.extras) for r in got] == [("helix-agents-core", {"otel"}), ("x", set())]
    got = _installed_by("pip install helix-agents-store-sqlite   # or -postgres, -redis\n")
    assert sorted(r.name for r in got) == [
        f"helix-agents-store-{b}" for b in ("postgres", "redis", "sqlite")
    ]
    code = 'import langgraph.graph\nfrom helix_agents.store_memory import M\nu = "redis://h"\n'
    assert _needs(code) == {
        "langgraph.graph",
        "helix-agents-store-memory",
        "helix-agents-store-redis",
    }
    assert not _provides("langgraph-checkpoint", "langgraph.graph")
    assert _provides("langgraph", "langgraph.graph")
