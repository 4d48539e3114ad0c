"""The store uses only the public API of its drivers: no private module, class or attribute of
psycopg or psycopg_pool (a minor release may change any of them)."""

from __future__ import annotations

import ast
from pathlib import Path

import helix_agents.store_postgres

_PACKAGE = Path(helix_agents.store_postgres.__file__).parent
_DRIVERS = ("psycopg", "psycopg_pool")


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(_PACKAGE.glob("*.py"))]


def test_no_private_driver_module_or_name_is_imported() -> None:
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [
                f"{path.name}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in _DRIVERS and _private(name)
            ]
    assert found == []


def test_no_private_attribute_of_anything_but_our_own() -> None:
    """Every ``x._name`` the package reads or writes names something it defines itself."""
    ours: set[str] = set()
    used: list[tuple[str, str]] = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
            elif isinstance(node, ast.Attribute):
                if isinstance(node.ctx, ast.Store):
                    ours.add(node.attr)
                elif _private(node.attr):
                    used.append((f"{path.name}:{node.lineno}", node.attr))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                ours.add(node.target.id)
    # A named tuple's documented methods (urlsplit's result) start with "_".
    ours |= {"_replace", "_asdict", "_fields", "_make"}
    assert [f"{where} .{name}" for where, name in used if name not in ours] == []


def test_the_guard_finds_what_it_looks_for() -> None:
    """The checks above flag a private import and a foreign private attribute."""
    tree = ast.parse("from psycopg._encodings import x\nconn._prepared.clear()\n")
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imports and _private(f"{imports[0].module}")
    attrs = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    assert "_prepared" in attrs and _private("_prepared")
