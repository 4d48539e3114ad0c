"""Write the last ``mutmut run``'s score and surviving mutants into docs/contract.md.

Run by ``make mutation`` after ``mutmut run``: it reads ``mutmut junitxml`` and
replaces the text between the two mutation markers of docs/contract.md.
"""

from __future__ import annotations

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


def report(xml: str) -> str:
    """The Markdown of the score and the table of survivors."""
    cases = list(ET.fromstring(xml).iter("testcase"))
    outcomes = Counter(_outcome(case) for case in cases)
    run = outcomes["killed"] + outcomes["survived"] + outcomes["timed out"]
    score = f"{100 * outcomes['killed'] / run:.1f} %" if run else "n/a"
    lines = [
        f"Mutants: {len(cases)}; run: {run}; killed: {outcomes['killed']}; "
        f"survived: {outcomes['survived']}; timed out: {outcomes['timed out']}; "
        f"not run: {outcomes['not run']}. Score (killed of run): **{score}**.",
        "",
        "| mutant | file | line | source line |",
        "| --- | --- | --- | --- |",
    ]
    for case in cases:
        if _outcome(case) == "survived":
            source = (case.findtext("system-out") or "").strip().replace("|", "\\|")
            name = case.get("name", "").removeprefix("Mutant #")
            lines.append(f"| {name} | `{case.get('file')}` | {case.get('line')} | `{source}` |")
    return "\n".join(lines)


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
