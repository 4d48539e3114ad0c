"""Every distribution is ready to publish (docs/releasing.md).

``uv build`` makes each one's sdist, then its wheel from that sdist (so the sdist is
complete); ``twine check --strict`` passes on all of them; their metadata carries the
shared version, sibling pins on it, the license, classifiers, project URLs and a README
of their own. Each wheel installs into a bare virtual environment with only what it
declares (our wheels it names, third-party packages at the workspace's locked versions,
offline from uv's cache) and works there: ``open_store`` on its backend; the adapters and
the ``helix-store`` command, which take a store and pick none, with the memory backend's
wheel beside them, on a memory store.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = sorted([*ROOT.glob("packages/*/pyproject.toml"), ROOT / "contract_tests/pyproject.toml"])
DISTS = {tomllib.loads(p.read_text())["project"]["name"]: p.parent for p in PROJECTS}

_OPEN = """
import asyncio, os
from helix_agents.core import open_store

async def main() -> None:
    async with open_store(os.environ["STORE_URL"]) as store:
        session = await store.create_session(user_id="u-1")
        assert (await store.get_session(session.id)) == session

asyncio.run(main())
"""
_ON_MEMORY = """
import asyncio
from helix_agents.core import open_store
{imports}

async def main() -> None:
    async with open_store("memory://") as store:{body}
asyncio.run(main())
"""
# What each distribution must do in a venv holding only it and what it declares.
SMOKE = {
    "helix-agents-core": """
import importlib.util
from helix_agents.core import ValidationError, open_store
try:
    open_store("memory://")
except ValidationError:
    pass  # no backend installed: the error names the distribution to install
else:
    raise AssertionError("core alone opened a memory store")
assert not [m for m in ("aiosqlite", "psycopg", "redis") if importlib.util.find_spec(m)]
""",
    "helix-agents-store-memory": _OPEN,
    "helix-agents-store-sqlite": _OPEN,
    "helix-agents-store-postgres": _OPEN,
    "helix-agents-store-redis": _OPEN,
    "helix-agents-contract": "from helix_agents.contract import SessionStoreContract",
    "helix-agents-langgraph": _ON_MEMORY.format(
        imports="""
from langgraph.checkpoint.base import empty_checkpoint
from helix_agents.langgraph import HelixCheckpointSaver
""",
        body="""
        saver = HelixCheckpointSaver(store)
        config = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}
        saved = await saver.aput(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
        got = await saver.aget_tuple(saved)
        assert got and got.checkpoint["id"] == saved["configurable"]["checkpoint_id"]
""",
    ),
    "helix-agents-openai-agents": _ON_MEMORY.format(
        imports="from helix_agents.openai_agents import HelixSession",
        body="""
        session = HelixSession("s-1", store, user_id="u-1")
        await session.add_items([{"role": "user", "content": "Hello"}])
        assert await session.get_items() == [{"role": "user", "content": "Hello"}]
""",
    ),
    "helix-agents-adk": _ON_MEMORY.format(
        imports="from helix_agents.adk import HelixSessionService",
        body="""
        service = HelixSessionService(store)
        made = await service.create_session(app_name="app", user_id="u-1", state={"k": 1})
        got = await service.get_session(app_name="app", user_id="u-1", session_id=made.id)
        assert got and got.state == {"k": 1}
""",
    ),
    "helix-agents-mcp": _ON_MEMORY.format(
        imports="""
from mcp_types import JSONRPCResponse
from helix_agents.mcp import HelixEventStore
""",
        body="""
        events = HelixEventStore(store)
        first = await events.store_event("1", None)
        await events.store_event("1", JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
        sent = []

        async def send(event):
            sent.append(event.message)

        assert await events.replay_events_after(first, send) == "1"
        assert sent == [JSONRPCResponse(jsonrpc="2.0", id=1, result={})]
""",
    ),
    "helix-agents-pydantic-ai": _ON_MEMORY.format(
        imports="""
from pydantic_ai.messages import ModelRequest, UserPromptPart
from helix_agents.pydantic_ai import HelixHistory
""",
        body="""
        history = HelixHistory(store, "chat-1")
        assert await history.load() == []
        await history.save([ModelRequest(parts=[UserPromptPart("Hello")])])
        assert await HelixHistory(store, "chat-1").load() == history.messages
""",
    ),
    "helix-agents-agent-framework": _ON_MEMORY.format(
        imports="""
from agent_framework import Message
from helix_agents.agent_framework import HelixHistoryProvider
""",
        body="""
        provider = HelixHistoryProvider(store)
        assert await provider.get_messages("chat-1") == []
        await provider.save_messages("chat-1", [Message("user", ["Hello"])])
        assert [m.text for m in await provider.get_messages("chat-1")] == ["Hello"]
""",
    ),
    "helix-agents-cli": "from helix_agents.cli import app",
    "helix-agents-crewai": """
from helix_agents.crewai import HelixFlowPersistence

with HelixFlowPersistence("memory://") as persistence:
    persistence.save_state("flow-1", "start", {"id": "flow-1", "n": 1})
    assert persistence.load_state("flow-1") == {"id": "flow-1", "n": 1}
""",
}
# Distributions outside the workspace's lock (docs/integrations/crewai.md: CrewAI pins mcp<2),
# built by path; in the bare venv their framework comes at the release their tests run on,
# with its dependencies and ours resolved together from uv's cache (those tests fill it).
OUTSIDE_LOCK = {"helix-agents-crewai": "crewai==1.15.30"}
# The distributions that take a store and pick no backend: the memory wheel goes beside them.
WITH_MEMORY = frozenset(
    (
        "helix-agents-langgraph",
        "helix-agents-openai-agents",
        "helix-agents-adk",
        "helix-agents-mcp",
        "helix-agents-pydantic-ai",
        "helix-agents-agent-framework",
        "helix-agents-cli",
        "helix-agents-crewai",
    )
)


def _uv() -> str:
    # `uv run` exports UV; `make` runs pytest through it.
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv is needed to build the distributions (make install provides it)"
    return uv


def _run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{' '.join(map(str, args))}:\n{done.stderr}{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(_uv(), "build", "--all-packages", "--quiet", "--out-dir", out)
    for name in OUTSIDE_LOCK:
        _run(_uv(), "build", DISTS[name], "--quiet", "--out-dir", out)
    return out


def _file(dist_dir: Path, name: str, suffix: str) -> Path:
    found = list(dist_dir.glob(f"{name.replace('-', '_')}-*{suffix}"))
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def _metadata(dist_dir: Path, name: str) -> Message:
    with zipfile.ZipFile(_file(dist_dir, name, ".whl")) as wheel:
        (path,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(wheel.read(path).decode())


def _siblings(meta: Message) -> list[Requirement]:
    """The distributions of this workspace that ``meta`` requires (extras included)."""
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    return [r for r in requires if canonicalize_name(r.name) in DISTS]


def test_twine_check_strict(dist_dir: Path) -> None:
    files = sorted(dist_dir.glob("*.whl")) + sorted(dist_dir.glob("*.tar.gz"))
    assert len(files) == 2 * len(DISTS), [f.name for f in files]
    _run(sys.executable, "-m", "twine", "check", "--strict", *files)


def test_one_version_for_all(dist_dir: Path) -> None:
    """The distributions are versioned together and pin each other at that version."""
    versions = {name: _metadata(dist_dir, name)["Version"] for name in DISTS}
    assert len(set(versions.values())) == 1, versions
    (version,) = set(versions.values())
    for name in DISTS:
        for req in _siblings(_metadata(dist_dir, name)):
            assert str(req.specifier) == f"=={version}", f"{name} requires {req}"


@pytest.mark.parametrize("name", DISTS)
def test_metadata_is_complete(dist_dir: Path, name: str) -> None:
    meta = _metadata(dist_dir, name)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers), classifiers
    urls = {u.split(",", 1)[0] for u in meta.get_all("Project-URL") or []}
    assert {"Documentation", "Source", "Changelog"} <= urls, urls
    assert meta["Description-Content-Type"] == "text/markdown"
    # Its own README, not the workspace's.
    readme = str(meta.get_payload())
    assert readme.startswith(f"# {name}\n"), readme[:80]


def _closure(dist_dir: Path, name: str) -> list[str]:
    """``name`` and the workspace distributions it requires, transitively (no extras)."""
    todo, seen = [name], []
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.append(current)
            todo += [
                canonicalize_name(r.name)
                for r in _siblings(_metadata(dist_dir, current))
                if r.marker is None
            ]
    return seen


@pytest.mark.parametrize("name", DISTS)
def test_wheel_works_in_a_bare_venv(
    dist_dir: Path, name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    uv = _uv()
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    _run(uv, "venv", "--quiet", "--python", sys.executable, venv)
    install = ("pip", "install", "--quiet", "--offline", "--python", python)
    dists = _closure(dist_dir, name)
    if name in WITH_MEMORY:
        dists.append("helix-agents-store-memory")
    wheels = [_file(dist_dir, dist, ".whl") for dist in dists]
    if name in OUTSIDE_LOCK:
        _run(uv, *install, OUTSIDE_LOCK[name], *wheels)
    else:
        # Third-party dependencies at the lock's versions, from uv's cache: no network.
        lock = tmp_path / "pylock.toml"
        export = ("export", "--quiet", "--frozen", "--no-default-groups", "--no-emit-workspace")
        _run(uv, *export, "--package", name, "--format", "pylock.toml", "--output-file", lock)
        _run(uv, *install, "-r", lock)
        _run(uv, *install, "--no-deps", *wheels)
    # Every requirement the installed wheels declare is met.
    _run(uv, "pip", "check", "--python", python)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    if name == "helix-agents-store-memory":
        env["STORE_URL"] = "memory://"
    elif name == "helix-agents-store-sqlite":
        env["STORE_URL"] = "sqlite:///agent.db"
    elif name == "helix-agents-store-postgres":
        env["STORE_URL"] = request.getfixturevalue("pg_database") + "?auto_migrate=true"
    elif name == "helix-agents-store-redis":
        env["STORE_URL"] = request.getfixturevalue("redis_url")
    _run(python, "-c", SMOKE[name], cwd=tmp_path, env=env)
    if name == "helix-agents-cli":
        assert "helix-store" in _run(venv / "bin" / "helix-store", "--help", env=env)
        migrate = _run(venv / "bin" / "helix-store", "migrate", "memory://", "--json", env=env)
        assert json.loads(migrate)["backend"] == "helix.memory", migrate
        # `serve` without its extra: a usage error naming the extra, not a traceback.
        bare = subprocess.run(
            [venv / "bin" / "helix-store", "serve", "memory://"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert bare.returncode == 2 and "helix-agents-cli[serve]" in bare.stderr, bare.stderr
