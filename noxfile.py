"""nox sessions: tests per backend, lint, types and docs, all in the uv workspace's .venv."""

from __future__ import annotations

import os

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


@nox.session
def langgraph(session: nox.Session) -> None:
    """The LangGraph saver: LangGraph's conformance suite and the example, on every backend."""
    uv_run(session, "pytest", "packages/helix-agents-langgraph", *session.posargs)


@nox.session
def cli(session: nox.Session) -> None:
    """The installed helix-store command, in subprocesses, on SQLite, Postgres and Redis."""
    uv_run(session, "pytest", "packages/helix-agents-cli", *session.posargs)


@nox.session
def openai_agents(session: nox.Session) -> None:
    """The OpenAI Agents SDK adapter on every backend, with the SDK's own session tests."""
    uv_run(session, "pytest", "packages/helix-agents-openai-agents", *session.posargs)


@nox.session
def repo(session: nox.Session) -> None:
    """The repository's own tests: the docs site, its code blocks, the release builds."""
    uv_run(session, "pytest", "repo_tests", *session.posargs)


@nox.session
def adk(session: nox.Session) -> None:
    """The Google ADK session service: ADK's contract restated, on ADK's own and on ours."""
    uv_run(session, "pytest", "packages/helix-agents-adk", *session.posargs)


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
