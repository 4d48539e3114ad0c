"""Mutation testing: how many small bugs in a store does the contract suite catch?

mutmut 2 makes the mutants of the memory store and the core modules it runs on
(TARGETS), one small edit each (a ``<`` for a ``<=``, a ``+ 1`` dropped, a ``True``
for a ``False``). This runner applies each mutant in memory, never on disk: a
forked child of a process that has already imported pytest, Hypothesis and
pydantic imports the mutated module from the mutant's text and runs the contract
suite on the memory store, stopping at its first failure. A mutant the suite
passes *survived*. Hypothesis runs derandomized without its example database, so
a run is reproducible.

    python contract_tests/mutation.py            # every mutant; the report into docs/contract.md
    python contract_tests/mutation.py --sample 12 --seed 3   # 12 mutants not judged yet

Survivors judged are listed by mutant key in ``mutation_survivors.txt``, one line
each: ``equivalent`` (the edit changes no behaviour the contract defines; left out
of the score) or ``outside`` (a real change the contract does not cover, such as
a constructor's own option check; counted as a survivor), and why. The exit
status is 1 when a mutant not judged survives.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import random
import shlex
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGETS = (
    "packages/helix-agents-store-memory/src/helix_agents/store_memory",
    "packages/helix-agents-core/src/helix_agents/core/rules.py",
    "packages/helix-agents-core/src/helix_agents/core/inprocess",
    "packages/helix-agents-core/src/helix_agents/core/base",
    "packages/helix-agents-core/src/helix_agents/core/edits.py",
    "packages/helix-agents-core/src/helix_agents/core/context/reads.py",
    "packages/helix-agents-core/src/helix_agents/core/lifecycle.py",
    "packages/helix-agents-core/src/helix_agents/core/inputs.py",
    "packages/helix-agents-core/src/helix_agents/core/sessiondoc.py",
    "packages/helix-agents-core/src/helix_agents/core/usage.py",
)
# The memory store's contract, and the test holding core's input fast paths to the generic
# checks (the memory engine keeps rows as objects, so it never reads the JSON they make).
TESTS = (
    "packages/helix-agents-store-memory/tests"
    " packages/helix-agents-core/tests/test_inputs_fast_path.py"
)
SURVIVORS = Path(__file__).with_name("mutation_survivors.txt")
DOCS = ROOT / "docs" / "contract.md"
BEGIN, END = "<!-- mutation: begin -->", "<!-- mutation: end -->"
KILLED, SURVIVED, TIMED_OUT = "killed", "survived", "timed out"
EQUIVALENT, OUTSIDE = "equivalent", "outside"


@dataclass(frozen=True, slots=True)
class Mutant:
    """The ``index``-th edit of one source line; ``key`` names it while the line is unchanged."""

    key: str
    path: str
    line_number: int
    line: str
    index: int

    @property
    def module(self) -> str:
        """The dotted name the mutated file is imported as."""
        return self.path.split("/src/", 1)[1].removesuffix(".py").replace("/", ".")

    def source(self) -> str:
        """The file's text with this mutant's edit."""
        from mutmut import Context, RelativeMutationID, mutate

        text = (ROOT / self.path).read_text()
        line = text.split("\n")[self.line_number - 1]
        mid = RelativeMutationID(line, self.index, self.line_number - 1, self.path)
        return str(mutate(Context(source=text, mutation_id=mid, filename=self.path))[0])

    def edit(self) -> str:
        """The mutated line (or lines)."""
        old = (ROOT / self.path).read_text().split("\n")
        diff = difflib.unified_diff(old, self.source().split("\n"), lineterm="", n=0)
        return " ".join(d[1:].strip() for d in diff if d[:1] == "+" and d[:3] != "+++")


def _files(targets: Sequence[str]) -> Iterator[str]:
    for target in targets:
        path = ROOT / target
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        yield from (str(p.relative_to(ROOT)) for p in found)


def mutants(targets: Sequence[str] = TARGETS) -> list[Mutant]:
    """Every mutant mutmut makes of the files (or directories) in ``targets``."""
    from mutmut import Context, list_mutations

    found: list[Mutant] = []
    for path in _files(targets):
        text = (ROOT / path).read_text()
        lines = [line.strip() for line in text.split("\n")]
        for mid in list_mutations(Context(source=text, filename=path)):
            # The same text on several lines: the occurrence keeps their keys apart.
            seen = lines[: mid.line_number].count(mid.line.strip())
            ident = f"{path}\0{mid.line.strip()}\0{seen}\0{mid.index}"
            key = hashlib.sha1(ident.encode()).hexdigest()[:8]
            found.append(Mutant(key, path, mid.line_number + 1, mid.line.strip(), mid.index))
    return found


def known() -> dict[str, tuple[str, str]]:
    """Mutant key -> (kind, why) of every survivor judged: ``equivalent`` or ``outside``."""
    judged: dict[str, tuple[str, str]] = {}
    for raw in SURVIVORS.read_text().splitlines():
        if raw.strip() and not raw.startswith("#"):
            key, kind, why = raw.split(" ", 2)
            assert kind in (EQUIVALENT, OUTSIDE), raw
            judged[key] = (kind, why.strip())
    return judged


class _MutantImporter(MetaPathFinder, Loader):
    """Imports one module from the mutant's text instead of its file."""

    def __init__(self, mutant: Mutant) -> None:
        self.mutant = mutant

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != self.mutant.module:
            return None
        return spec_from_file_location(fullname, ROOT / self.mutant.path, loader=self)

    def exec_module(self, module: ModuleType) -> None:
        code = compile(self.mutant.source(), str(ROOT / self.mutant.path), "exec")
        exec(code, module.__dict__)


def _preload() -> set[str]:
    """Import what every run needs once; the helix modules it loaded (a child drops them)."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    from hypothesis import settings

    # Loaded before the suite registers its profiles, which then inherit both.
    settings.register_profile("helix-mutation", derandomize=True, database=None)
    settings.load_profile("helix-mutation")
    import _hypothesis_pytestplugin  # noqa: F401
    import anyio.pytest_plugin  # noqa: F401
    import pytest  # noqa: F401

    import helix_agents.contract  # noqa: F401

    return {name for name in sys.modules if name.split(".")[0] == "helix_agents"}


class _FastestFirst:
    """A pytest plugin: times each test of the clean run; runs a mutant's fastest tests first."""

    def __init__(self, durations: dict[str, float]) -> None:
        self.durations = durations

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        items.sort(key=lambda item: self.durations.get(item.nodeid, 0.0))

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration


def _child(
    mutant: Mutant | None,
    preloaded: set[str],
    pytest_args: Sequence[str],
    durations: dict[str, float],
    times: Path | None,
) -> int:
    import pytest

    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    if mutant is not None:
        sys.meta_path.insert(0, _MutantImporter(mutant))
        if mutant.module in preloaded:  # modules imported with the original hold on to it
            for name in preloaded:
                del sys.modules[name]
    args = ["-x", "-q", "--assert=plain", "-p", "no:cacheprovider", "-p", "anyio"]
    args += ["-p", "_hypothesis_pytestplugin"]
    timing = _FastestFirst(dict(durations))
    code = int(pytest.main([*args, *pytest_args], plugins=[timing]))
    if times is not None:
        times.write_text(json.dumps(timing.durations))
    return code


def _run(
    mutant: Mutant | None,
    preloaded: set[str],
    pytest_args: Sequence[str],
    timeout: float,
    durations: dict[str, float],
    times: Path | None = None,
) -> str:
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child never returns)
        code = 3
        try:
            code = _child(mutant, preloaded, pytest_args, durations, times)
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return SURVIVED if os.waitstatus_to_exitcode(status) == 0 else KILLED
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return TIMED_OUT


def _recorded(results: Path | None) -> dict[str, str]:
    if results is None or not results.exists():
        return {}
    rows = (line.split(" ", 1) for line in results.read_text().splitlines() if line)
    return {key: outcome for key, outcome in rows}


def run(
    chosen: Sequence[Mutant],
    pytest_args: Sequence[str] = tuple(TESTS.split()),
    results: Path | None = None,
    shard: tuple[int, int] = (1, 1),
) -> dict[str, str]:
    """Mutant key -> killed, survived or timed out, after a clean run that must pass.

    With ``results``, a mutant recorded there is not run again (delete its line to
    run it again), and each outcome is appended as it comes, so runs resume and
    shards share one file. ``shard`` ``(k, n)`` runs the k-th of every n mutants left.
    """
    os.chdir(ROOT)
    outcomes = _recorded(results)
    left = [m for m in chosen if m.key not in outcomes][shard[0] - 1 :: shard[1]]
    preloaded = _preload()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        times = Path(tmp) / "durations.json"
        if _run(None, preloaded, pytest_args, 600, {}, times) != SURVIVED:
            raise SystemExit(f"the suite fails without a mutant: pytest {' '.join(pytest_args)}")
        durations: dict[str, float] = json.loads(times.read_text())
    timeout = max(30.0, 3 * (time.monotonic() - start))
    for n, mutant in enumerate(left, 1):
        began = time.monotonic()
        outcome = outcomes[mutant.key] = _run(mutant, preloaded, pytest_args, timeout, durations)
        if results is not None:
            with results.open("a") as out:
                out.write(f"{mutant.key} {outcome}\n")
        took = time.monotonic() - began
        print(f"{n}/{len(left)} {mutant.key} {outcome} {took:.1f}s", flush=True)
    return {**_recorded(results), **outcomes}


def report(
    chosen: Sequence[Mutant], outcomes: dict[str, str], judged: dict[str, tuple[str, str]]
) -> str:
    """The Markdown of the score and a table of every survivor."""
    survivors = [m for m in chosen if outcomes[m.key] == SURVIVED]
    kinds = [judged.get(m.key, ("", ""))[0] for m in survivors]
    same, outside = kinds.count(EQUIVALENT), kinds.count(OUTSIDE)
    caught = sum(1 for m in chosen if outcomes[m.key] in (KILLED, TIMED_OUT))
    timed_out = sum(1 for m in chosen if outcomes[m.key] == TIMED_OUT)
    scored = len(chosen) - same
    score = f"{100 * caught / scored:.1f} %" if scored else "n/a"
    rows = [
        f"Mutants: {len(chosen)}; killed: {caught} ({timed_out} by the timeout); "
        f"survived: {len(survivors)}: {same} equivalent, {outside} outside the contract, "
        f"{len(survivors) - same - outside} not judged. Score (killed of the non-equivalent "
        f"mutants): **{score}** ({caught} of {scored}).",
        "",
        "| mutant | line | source line | mutant's line | why it survives |",
        "| --- | --- | --- | --- | --- |",
    ]
    for m in survivors:
        kind, why = judged.get(m.key, ("", "**not judged: a gap in the suite?**"))
        why = f"{kind}: {why}" if kind else why
        where = f"`{m.path.rsplit('/', 1)[1]}:{m.line_number}`"
        line, edit = (s.replace("|", "\\|") for s in (m.line, m.edit() or "(line removed)"))
        rows.append(f"| {m.key} | {where} | `{line}` | `{edit}` | {why} |")
    return "\n".join(rows) + "\n"


def write_report(markdown: str) -> None:
    """Replace the text between the mutation markers of docs/contract.md."""
    text = DOCS.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(f"{head}{BEGIN}\n{markdown}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mutants; 1 if a mutant not judged survived."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sample", type=int, help="run this many mutants not judged")
    parser.add_argument("--seed", type=int, default=0, help="which sample (default 0)")
    parser.add_argument("--files", nargs="+", default=TARGETS, help="files or directories")
    parser.add_argument("--keys", nargs="+", help="run only the mutants of these keys")
    parser.add_argument("--pytest", default=TESTS, help="pytest's arguments (one string)")
    parser.add_argument("--results", type=Path, help="outcomes file: resume, share, re-run")
    parser.add_argument("--shard", default="1/1", help="K/N: the K-th of every N mutants")
    args = parser.parse_args(argv)
    k, n = (int(part) for part in args.shard.split("/"))
    judged = known()
    chosen = mutants(args.files)
    if args.keys:
        chosen = [m for m in chosen if m.key in args.keys]
    elif args.sample is not None:
        pool = [m for m in chosen if m.key not in judged]
        chosen = random.Random(args.seed).sample(pool, min(args.sample, len(pool)))
    outcomes = run(chosen, shlex.split(args.pytest), args.results, (k, n))
    if any(m.key not in outcomes for m in chosen):
        print("some mutants are left to other shards: no report")
        return 0
    markdown = report(chosen, outcomes, judged)
    if args.sample is None and not args.keys and args.files == TARGETS:
        write_report(markdown)
    print(markdown)
    gaps = [m for m in chosen if outcomes[m.key] == SURVIVED and m.key not in judged]
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
