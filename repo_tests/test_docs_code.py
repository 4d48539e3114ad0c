"""Every ```python block of the docs (docs/**/*.md, README.md, the packages' READMEs) runs.

Each block runs as a script, ``python block.py``, in a fresh temporary directory, so a
relative SQLite path lands there (in a fork of a warmed interpreter: contract_tests/support/
warm_python.py). A block whose code names a PostgreSQL or Redis URL
runs against the local servers (``HELIX_POSTGRES_URL`` / ``HELIX_REDIS_URL``, else
127.0.0.1:5432 and :6379), with one substitution so runs never meet and leave nothing
behind: each ``postgresql://…`` URL in the block is pointed at a fresh database on the
local server (its query kept, dropped after the run), and each ``redis://…`` URL at the
local server under a fresh ``key_prefix=`` (its keys deleted after the run).

A block that imports the OpenAI Agents SDK (``agents``) runs with the SDK pointed at a
scripted stand-in for the model, served locally (``OPENAI_BASE_URL``; the SDK's tracing
export off), so ``Runner.run`` works as written and nothing leaves the machine; the store is
real. A block that imports CrewAI runs in the crewai overlay (contract_tests/support/
crewai_overlay.py: CrewAI is not in the locked environment). Every block runs: none may be
marked to skip. A block marked
``<!-- docs-example: NAME -->`` is a test file that contract_tests/tests/test_docs_example.py
runs with pytest.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from crewai_overlay import USES_CREWAI, overlay
from warm_python import run_python

ROOT = Path(__file__).resolve().parents[1]
PG_IN_CODE = re.compile(r"postgres(?:ql)?://[^\"'\s]*")
REDIS_IN_CODE = re.compile(r"rediss?://[^\"'\s]*")
USES_AGENTS_SDK = re.compile(r"^(?:from agents\b|import agents\b)", re.MULTILINE)
# A block on the SDK's own test model runs offline: it must never reach the served model.
OFFLINE_MODEL = re.compile(r"^from agents\.testing import", re.MULTILINE)
DOCS_EXAMPLE = re.compile(r"<!-- docs-example: (\S+) -->")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code and the marker before its fence."""

    path: Path
    line: int
    code: str
    marker: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _markdown_files() -> list[Path]:
    readmes = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
    return [*sorted((ROOT / "docs").rglob("*.md")), *readmes, ROOT / "contract_tests" / "README.md"]


def _blocks() -> list[Block]:
    blocks = []
    for path in _markdown_files():
        lines = path.read_text().splitlines()
        for start, text in enumerate(lines):
            if text.strip() != "```python":
                continue
            end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "```")
            marker = lines[start - 1].strip() if start else ""
            code = "\n".join(lines[start + 1 : end]) + "\n"
            blocks.append(Block(path, start + 1, code, marker))
    return blocks


BLOCKS = _blocks()


def test_blocks_found() -> None:
    """The collector sees the docs (a broken fence match would make every test vanish)."""
    assert len(BLOCKS) >= 20, [b.where for b in BLOCKS]


def test_every_block_runs() -> None:
    """No block is marked to be skipped: every ```python block of the docs is a test."""
    skipped = [b.where for b in BLOCKS if "not run" in b.marker]
    assert skipped == [], skipped


def _merge(url: str, found: re.Match[str]) -> str:
    """``url`` with the query arguments of the URL ``found`` in a block (its options kept)."""
    parts = urlsplit(url)
    pairs = parse_qsl(urlsplit(found[0]).query, keep_blank_values=True) + parse_qsl(parts.query)
    return parts._replace(query=urlencode(pairs)).geturl()


def _local(code: str, request: pytest.FixtureRequest) -> str:
    """The block with its server URLs pointed at the local servers, isolated (see above)."""
    for pattern, fixture in ((PG_IN_CODE, "pg_database"), (REDIS_IN_CODE, "redis_url")):
        if pattern.search(code):
            code = pattern.sub(partial(_merge, request.getfixturevalue(fixture)), code)
    return code


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if example := DOCS_EXAMPLE.fullmatch(block.marker):
        runner = ROOT / "contract_tests" / "tests" / "test_docs_example.py"
        assert f'_example("{example.group(1)}")' in runner.read_text(), block.where
        return
    script = tmp_path / "block.py"
    script.write_text(_local(block.code, request))
    env = dict(os.environ)
    uses_sdk = USES_AGENTS_SDK.search(block.code) is not None
    answered: list[object] = []  # the requests the scripted model answered
    if uses_sdk:
        model = request.getfixturevalue("scripted_model")
        answered = model.requests
        env |= {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-scripted-stand-in",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
        }
    asked = len(answered)
    if any(line.startswith(USES_CREWAI) for line in block.code.splitlines()):
        done = overlay("python", str(script), cwd=tmp_path)
    else:
        done = run_python([str(script)], cwd=tmp_path, env=env)
    assert done.returncode == 0, f"{block.where} failed:\n{done.stderr}{done.stdout}"
    if uses_sdk and OFFLINE_MODEL.search(block.code):
        assert len(answered) == asked, f"{block.where} is offline but called the served model"
    elif uses_sdk:
        assert len(answered) > asked, f"{block.where} never called the model"
