"""``python -m bench [--quick]``: run the benchmarks; write the results, the plot, the docs."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import sys
import time

from .conditions import busy_processes
from .config import ROOT, Servers, Settings
from .plot import plot
from .profiling import profile
from .report import publish, render, write_json
from .runner import PHASES, run

RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "docs" / "performance.md"
FIGURE = ROOT / "docs" / "img" / "performance.png"


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--quick", action="store_true", help="the short mode (a few minutes)")
    p.add_argument(
        "--phases", default=",".join(PHASES), help=f"comma-separated subset of {', '.join(PHASES)}"
    )
    p.add_argument(
        "--publish",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="update docs/performance.md and its plot (default: in the full mode only)",
    )
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to this long for no other pytest process to run",
    )
    p.add_argument(
        "--name",
        metavar="NAME",
        help="write bench/results/NAME.{json,md,png} (default: the mode, full or quick)",
    )
    p.add_argument(
        "--profile",
        metavar="SYSTEM",
        help="profile one system's turns with pyinstrument instead (e.g. 'helix redis')",
    )
    return p.parse_args(argv)


def _wait_quiet(limit: float) -> None:
    deadline = time.monotonic() + limit
    while (busy := busy_processes()) and time.monotonic() < deadline:
        logging.info("waiting for %d pytest processes to finish", busy)
        time.sleep(15)


def main(argv: list[str]) -> int:
    """Run what the arguments ask for."""
    args = _args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("helix_agents").setLevel(logging.WARNING)
    settings = Settings.quick() if args.quick else Settings.full()
    servers = Servers.from_env()
    if args.profile:
        slug = re.sub(r"[^a-z0-9]+", "-", args.profile.lower()).strip("-")
        out = RESULTS / f"profile-{slug}.html"
        print(asyncio.run(profile(args.profile, settings, servers, out)))
        print(f"HTML profile: {out}")
        return 0
    phases = tuple(p for p in args.phases.split(",") if p)
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise SystemExit(f"unknown phases: {', '.join(sorted(unknown))}")
    _wait_quiet(args.wait_quiet)
    name = args.name or settings.mode
    results = asyncio.run(run(settings, servers, phases))
    write_json(results, RESULTS / f"{name}.json")
    # The figure draws the turn workload: a run without that phase has none.
    drawable = bool(results["turns"])
    if args.publish if args.publish is not None else settings.mode == "full":
        if drawable:
            plot(results, FIGURE)
        publish(results, PAGE)
        print(f"published {PAGE} and {FIGURE}")
    else:
        if drawable:
            plot(results, RESULTS / f"{name}.png")
        (RESULTS / f"{name}.md").write_text(render(results) + "\n")
    print(render(results))
    print(f"results: {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
