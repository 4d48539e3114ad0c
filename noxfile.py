"""nox sessions: tests per backend, lint, types and docs, all in the uv workspace's .venv."""

from __future__ import annotations

import os
from collections.abc import Callable

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = [
    "lint",
    "types",
    "tests",
    "contract",
    "langgraph",
    "cli",
    "openai_agents",
    "repo",
    "adk",
    "mcp",
    "mcp_lowest",
    "pydantic_ai",
    "pydantic_ai_lowest",
    "agent_framework",
    "agent_framework_lowest",
    "crewai",
]

BACKENDS = {
    "memory": "packages/helix-agents-store-memory",
    "sqlite": "packages/helix-agents-store-sqlite",
    "postgres": "packages/helix-agents-store-postgres",
    "redis": "packages/helix-agents-store-redis",
}


def uv_run(session: nox.Session, *args: str) -> None:
    # `uv run` exports UV, so nox started by `make` finds a uv that is not on PATH.
    uv = os.environ.get("UV", "uv")
    session.run(uv, "run", "--all-packages", *args, external=True)


@nox.session
@nox.parametrize("backend", list(BACKENDS))
def tests(session: nox.Session, backend: str) -> None:
    """The contract suite and the backend's own tests, on one backend."""
    uv_run(session, "pytest", BACKENDS[backend], *session.posargs)


@nox.session
def contract(session: nox.Session) -> None:
    """The suite's own tests: broken stores caught, the guard, the plugin, the docs example."""
    uv_run(
        session, "pytest", "contract_tests/tests", "packages/helix-agents-core", *session.posargs
    )


# One pytest run of one folder each: session name -> (folder, what it checks).
SUITES = {
    "langgraph": (
        "packages/helix-agents-langgraph",
        "The LangGraph saver: LangGraph's conformance suite and the example, on every backend.",
    ),
    "cli": (
        "packages/helix-agents-cli",
        "The installed helix-store command, in subprocesses, on SQLite, Postgres and Redis.",
    ),
    "openai_agents": (
        "packages/helix-agents-openai-agents",
        "The OpenAI Agents SDK adapter on every backend, with the SDK's own session tests.",
    ),
    "repo": (
        "repo_tests",
        "The repository's own tests: the docs site, its code blocks, the release builds.",
    ),
    "adk": (
        "packages/helix-agents-adk",
        "The Google ADK session service: ADK's contract restated, on ADK's own and on ours.",
    ),
    "mcp": (
        "packages/helix-agents-mcp",
        "The MCP event store on every backend, with the SDK's own resumability tests (newest mcp).",
    ),
    "pydantic_ai": (
        "packages/helix-agents-pydantic-ai",
        "pydantic-ai message history on every backend, with the example (newest pydantic-ai).",
    ),
    "agent_framework": (
        "packages/helix-agents-agent-framework",
        "Agent Framework's history contract on its own provider and ours, with the example.",
    ),
    # CrewAI is not in the locked .venv (it pins mcp<2): this folder's one test file runs
    # crewai_tests/ in a child with CrewAI layered over it, on the newest and the lowest
    # release (its own lowest run, so no crewai_lowest session; CONTRIBUTING.md).
    "crewai": (
        "packages/helix-agents-crewai/tests",
        "CrewAI flow persistence on every backend, with CrewAI's own tests, the example and "
        "mypy, in a CrewAI overlay (newest and lowest crewai).",
    ),
}

# The lowest release of a framework an adapter declares, layered over the workspace by
# `uv run --with` (the locked .venv is left as it is).
LOWEST = {
    "mcp_lowest": ("packages/helix-agents-mcp", ("mcp==2.0.0", "mcp-types==2.0.0")),
    "pydantic_ai_lowest": ("packages/helix-agents-pydantic-ai", ("pydantic-ai-slim==1.32.0",)),
    "agent_framework_lowest": (
        "packages/helix-agents-agent-framework",
        ("agent-framework-core==1.0.0",),
    ),
}


def _suite(folder: str, doc: str) -> Callable[[nox.Session], None]:
    def run(session: nox.Session) -> None:
        uv_run(session, "pytest", folder, *session.posargs)

    run.__doc__ = doc
    return run


for _name, (_folder, _doc) in SUITES.items():
    nox.session(_suite(_folder, _doc), name=_name)


def _lowest(folder: str, pins: tuple[str, ...]) -> Callable[[nox.Session], None]:
    def run(session: nox.Session) -> None:
        with_pins = [arg for pin in pins for arg in ("--with", pin)]
        uv_run(session, *with_pins, "pytest", folder, *session.posargs)

    run.__doc__ = f"{folder} on the lowest framework release it declares: {', '.join(pins)}."
    return run


for _name, (_folder, _pins) in LOWEST.items():
    nox.session(_lowest(_folder, _pins), name=_name)


@nox.session
def mutation(session: nox.Session) -> None:
    """Mutation testing of the memory store and core's rules (``make mutation``)."""
    session.run("make", "mutation", external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff lint and format check."""
    uv_run(session, "ruff", "check", ".")
    uv_run(session, "ruff", "format", "--check", ".")


@nox.session
def types(session: nox.Session) -> None:
    """mypy --strict over every package, test and example."""
    uv_run(session, "mypy")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the docs site and its API reference into site/, failing on any warning."""
    uv_run(session, "mkdocs", "build", "--strict")
