"""The transcript in docs/cli.md is what the commands print: this test runs them.

``HELIX_WRITE_TRANSCRIPT=1 pytest -k transcript`` rewrites the block; otherwise
the block must match a fresh run, timestamps and durations aside.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .conftest import run_helix

DOC = Path(__file__).parents[3] / "docs" / "cli.md"
START, END = "<!-- transcript:start -->\n", "<!-- transcript:end -->\n"
URL = "sqlite:///demo.db"
COMMANDS: list[tuple[str, ...]] = [
    ("demo", URL),
    ("sessions", URL, "--user", "demo-user"),
    ("show", URL, "demo-trip"),
    ("show", URL, "demo-trip", "--first", "1", "--json"),
    ("stats", URL, "--user", "demo-user"),
    ("export", URL, "demo-trip"),
    ("migrate", "sqlite:///copy.db", "--dry-run"),
    ("migrate", "sqlite:///copy.db"),
    ("import", "sqlite:///copy.db", "demo.jsonl"),
    ("import", "sqlite:///copy.db", "demo.jsonl"),
    ("check", "sqlite:///copy.db", "-k", "SES_1 or MSG_1"),
    ("show", URL, "no-such-session"),
    ("show", "sqlite:///typo.db", "demo-trip"),
    ("delete", "sqlite:///copy.db", "demo-trip", "--yes"),
    ("--version",),
]
# What changes from run to run: times of day and how long things took; and what changes
# when the suite gains a rule: how many rules `check -k` leaves out (test_cli_check
# asserts what it runs).
_VOLATILE = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d)?|in [\d.]+s|: \d+\.\d+s"
    r"|\d+ deselected|out-[0-9a-f]{32}"  # times, durations, counts, output ids (random)
)


def _transcript(here: Path) -> str:
    parts = ["```console\n"]
    for args in COMMANDS:
        done = run_helix(*args, cwd=here)
        if args[0] == "export":
            (here / "demo.jsonl").write_text(done.out, "utf-8")
            parts.append(f"$ helix-store {' '.join(args)} > demo.jsonl\n")
            parts.append("$ head -n 3 demo.jsonl\n")
            parts.extend(f"{line}\n" for line in done.out.splitlines()[:3])
            continue
        shown = " ".join(f"'{a}'" if " " in a else a for a in args)
        parts.append(f"$ helix-store {shown}\n{done.out}{done.err}")
        if done.code:
            parts.append(f"$ echo $?\n{done.code}\n")
    parts.append("```\n")
    return "".join(parts)


def test_transcript_in_docs_is_what_the_commands_print(tmp_path: Path) -> None:
    text = DOC.read_text("utf-8")
    head, rest = text.split(START)
    old, tail = rest.split(END)
    fresh = _transcript(tmp_path)
    if os.environ.get("HELIX_WRITE_TRANSCRIPT") == "1":
        DOC.write_text(head + START + fresh + END + tail, "utf-8")
        return
    assert _VOLATILE.sub("…", old) == _VOLATILE.sub("…", fresh), (
        "docs/cli.md is stale: HELIX_WRITE_TRANSCRIPT=1 pytest -k transcript rewrites it"
    )
