"""Backends reach core through its public modules only (docs/backends/writing.md): the user
API and ``helix_agents.core.backend``, never a module core keeps to itself (its rules, its
``StoreBase`` internals, the in-process engine's modules), so core can move those freely."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = frozenset(
    {
        "helix_agents.core",
        "helix_agents.core.backend",
        "helix_agents.core.context",
        "helix_agents.core.errors",
        "helix_agents.core.handles",
        "helix_agents.core.limits",
        "helix_agents.core.messages",
        "helix_agents.core.models",
        "helix_agents.core.runtime",
    }
)


def test_backends_import_only_public_core_modules() -> None:
    sources = [*ROOT.glob("packages/helix-agents-store-*/src"), ROOT / "examples" / "custom_store"]
    assert len(sources) >= 5
    found = []
    for path in sorted(p for source in sources for p in source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.startswith("helix_agents.core") and module not in PUBLIC:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert found == []
