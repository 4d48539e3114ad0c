"""Every ```python block of the docs (docs/**/*.md, README.md, the packages' READMEs) runs.

Each block runs as a script, ``python block.py``, in a fresh temporary directory, so a
relative SQLite path lands there. A block whose code names a PostgreSQL or Redis URL
runs against the local servers (``HELIX_POSTGRES_URL`` / ``HELIX_REDIS_URL``, else
127.0.0.1:5432 and :6379), with one substitution so runs never meet and leave nothing
behind: each ``postgresql://…`` URL in the block is pointed at a fresh database on the
local server (its query kept, dropped after the run), and each ``redis://…`` URL at the
local server under a fresh ``key_prefix=`` (its keys deleted after the run).

A block that cannot run carries ``<!-- not run: <reason> -->`` on the line before its
fence; there must stay few of them. A block marked ``<!-- docs-example: NAME -->`` is a
test file that contract_tests/tests/test_docs_example.py runs with pytest.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_NOT_RUN = 5
PG_IN_CODE = re.compile(r"postgres(?:ql)?://[^\"'\s]*")
REDIS_IN_CODE = re.compile(r"rediss?://[^\"'\s]*")
NOT_RUN = re.compile(r"<!-- not run: (.*?) -->")
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


def test_few_blocks_do_not_run() -> None:
    """Blocks left unrun state why, and stay few; the list is printed for the record."""
    not_run = [(b.where, NOT_RUN.fullmatch(b.marker)) for b in BLOCKS if "not run" in b.marker]
    for where, match in not_run:
        assert match and match.group(1).strip(), f"{where}: write <!-- not run: <reason> -->"
        print(f"not run: {where}: {match.group(1)}")
    assert len(not_run) <= MAX_NOT_RUN, [where for where, _ in not_run]


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
    if reason := NOT_RUN.fullmatch(block.marker):
        pytest.skip(f"not run: {reason.group(1)}")
    if example := DOCS_EXAMPLE.fullmatch(block.marker):
        runner = ROOT / "contract_tests" / "tests" / "test_docs_example.py"
        assert f'_example("{example.group(1)}")' in runner.read_text(), block.where
        return
    script = tmp_path / "block.py"
    script.write_text(_local(block.code, request))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{block.where} failed:\n{done.stderr}{done.stdout}"
