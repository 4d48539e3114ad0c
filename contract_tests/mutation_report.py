"""Write the last ``mutmut run``'s score and surviving mutants into docs/contract.md.

Run by ``make mutation`` after ``mutmut run``: it reads ``mutmut junitxml`` and
replaces the text between the two mutation markers of docs/contract.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "contract.md"
BEGIN, END = "<!-- mutation: begin -->", "<!-- mutation: end -->"


def _outcome(case: ET.Element) -> str:
    if case.find("failure") is not None:
        return "survived"
    if case.find("error") is not None:
        return "timed out"
    if case.find("skipped") is not None:
        return "not run"
    return "killed"


_STRING = re.compile(r"""(["'])(?:\\.|(?!\1).)*\1""")


def _edit(diff: str) -> tuple[str, str]:
    """The removed and the added line of a mutant's unified diff."""
    old = [line[1:] for line in diff.splitlines() if line.startswith("-") and line[1:2] != "-"]
    new = [line[1:] for line in diff.splitlines() if line.startswith("+") and line[1:2] != "+"]
    return " ".join(old).strip(), " ".join(new).strip()


def equivalence(diff: str) -> str:
    """Why a surviving mutant changes no behaviour the contract defines, or "" if unknown."""
    old, new = _edit(diff)
    if "TypeVar(" in old:
        return "a TypeVar's name: no behaviour"
    text_only = _STRING.sub('""', old) == _STRING.sub('""', new)
    # A text built for a message, replaced by None (mutmut's edit of an assignment).
    if text_only or (new.endswith("= None") and _STRING.search(old.partition("=")[2])):
        return "text of a message or field name: the contract checks codes, not text"
    if "|" in old and "&" in new and ":" in old:
        return "an annotation: never evaluated (postponed annotations)"
    if "microseconds=1" in old:
        return "a larger step still moves activity strictly forward (SES-7)"
    if "@dataclass(" in old:
        return "a flag of an internal plan: built once, never changed, never compared"
    return ""


def report(xml: str) -> str:
    """The Markdown of the score and the table of survivors."""
    cases = list(ET.fromstring(xml).iter("testcase"))
    outcomes = Counter(_outcome(case) for case in cases)
    survivors = [case for case in cases if _outcome(case) == "survived"]
    why = {id(case): equivalence(case.findtext("failure") or "") for case in survivors}
    equivalent = sum(1 for reason in why.values() if reason)
    run = outcomes["killed"] + outcomes["survived"] + outcomes["timed out"]
    scored = run - equivalent
    score = f"{100 * outcomes['killed'] / scored:.1f} %" if scored else "n/a"
    lines = [
        f"Mutants: {len(cases)}; run: {run}; killed: {outcomes['killed']}; "
        f"survived: {outcomes['survived']} ({equivalent} of them equivalent); "
        f"timed out: {outcomes['timed out']}; not run: {outcomes['not run']}. "
        f"Score (killed of the non-equivalent mutants run): **{score}**.",
        "",
        "| mutant | file | line | source line | equivalent because |",
        "| --- | --- | --- | --- | --- |",
    ]
    for case in survivors:
        source = (case.findtext("system-out") or "").strip().replace("|", "\\|")
        name = case.get("name", "").removeprefix("Mutant #")
        reason = why[id(case)] or "**not equivalent: a gap in the suite**"
        lines.append(
            f"| {name} | `{case.get('file')}` | {case.get('line')} | `{source}` | {reason} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    """Replace the report in docs/contract.md."""
    xml = subprocess.run(
        ["mutmut", "junitxml", "--untested-policy=skipped", "--suspicious-policy=ignore"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    text = DOCS.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(f"{head}{BEGIN}\n{report(xml)}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
