"""Our code reaches psycopg, psycopg_pool, redis-py and aiosqlite through their public API only
(docs/architecture.md, "Only public driver APIs"): a minor release of a driver may change
anything private, and a store must not break a user's production when it does.

Three checks over every module of every distribution, the example store and the contract:

* no import of a private module or name of a driver (``psycopg._preparing``,
  ``from redis.asyncio.connection import _x``);
* no attribute access ``obj._name`` where ``_name`` is private in a driver's own source,
  unless ``obj`` is ``self`` or ``cls`` and the name is one of ours (``self._pool`` of our
  own classes stays allowed; ``conn._execute`` on a driver's connection does not);
* no walking of tracebacks or frames to recognise a driver's code (``tb_frame``,
  ``f_code``, ``co_name``, ``traceback.walk_tb`` and their kin).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ("psycopg", "psycopg_pool", "redis", "aiosqlite")
# A traceback's frames and the helpers that walk them; formatting one for a person is fine.
FRAME_NAMES = frozenset(
    {"tb_frame", "tb_next", "f_code", "f_back", "co_name", "f_globals", "walk_tb", "extract_tb"}
    | {"walk_stack", "extract_stack", "currentframe", "getinnerframes", "_getframe"}
)


def _ours() -> list[Path]:
    roots = [*ROOT.glob("packages/*/src"), ROOT / "examples", ROOT / "contract_tests" / "src"]
    return sorted(path for root in roots for path in root.rglob("*.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined(tree: ast.AST) -> Iterator[str]:
    """Every private name a module defines: functions, classes, attributes set, arguments."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.alias):
            yield (node.asname or node.name).split(".")[0]


@cache
def _driver_privates() -> frozenset[str]:
    names: set[str] = set()
    for driver in DRIVERS:
        spec = importlib.util.find_spec(driver)
        assert spec is not None and spec.origin is not None, f"{driver} is not installed"
        for path in Path(spec.origin).parent.rglob("*.py"):
            names.update(n for n in _defined(ast.parse(path.read_text())) if _private(n))
    return frozenset(names)


def _parsed() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in _ours()]


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def test_no_private_driver_module_or_name_is_imported() -> None:
    found: list[str] = []
    for path, tree in _parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
                names: list[str] = []
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
                names = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] in DRIVERS and (any(map(_private, parts)) or any(map(_private, names))):
                    found.append(f"{_where(path, node)} imports {module} {names}")
    assert found == []


def test_no_private_driver_attribute_is_touched() -> None:
    parsed = _parsed()
    ours = {name for _, tree in parsed for name in _defined(tree) if _private(name)}
    theirs = _driver_privates()
    assert theirs, "no private names found in the drivers: the check would see nothing"
    found = [
        f"{_where(path, node)} touches .{node.attr}"
        for path, tree in parsed
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in theirs
        # On ``self`` or ``cls`` a name of ours is our own attribute; on anything else
        # (a connection, a client, a pool) a driver's private name is the driver's.
        and (node.attr not in ours or not _on_self(node))
    ]
    assert found == []


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


def test_no_traceback_or_frame_is_walked() -> None:
    found = [
        f"{_where(path, node)} reads {name}"
        for path, tree in _parsed()
        for node in ast.walk(tree)
        for name in [
            node.attr
            if isinstance(node, ast.Attribute)
            else node.name
            if isinstance(node, ast.alias)
            else None
        ]
        if name in FRAME_NAMES
    ]
    assert found == []
