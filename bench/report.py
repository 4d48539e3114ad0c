"""The results file, and the tables ``docs/performance.md`` shows between its markers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .targets import PEERS, evaluate, paired_ratios

__all__ = ["BEGIN", "END", "publish", "render", "write_json"]

BEGIN = "<!-- bench:results:begin -->"
END = "<!-- bench:results:end -->"


def _f(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.{digits}f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _turns(results: dict[str, Any]) -> list[str]:
    head = [
        "system",
        "server",
        "turns/s median (min-max)",
        "append p50 / p99 ms",
        "read p50 / p99 ms",
        "bytes per row",
    ]
    rows = []
    for t in results["turns"]:
        if t["error"]:
            rows.append([t["name"], t["server"], f"failed: {t['error']}", "", "", ""])
            continue
        tps, a, r = t["turns_per_s"], t["append"], t["read"]
        rows.append(
            [
                t["name"],
                t["server"],
                f"**{_f(tps['median'], 0)}** ({_f(tps['low'], 0)}-{_f(tps['high'], 0)})",
                f"{_f(a['p50_ms'])} / {_f(a['p99_ms'])}",
                f"{_f(r['p50_ms'])} / {_f(r['p99_ms'])}",
                _f(t["bytes_per_row"], 0),
            ]
        )
    skipped = [f"* skipped {name}: {why}" for name, why in results.get("skipped", {}).items()]
    return [*_table(head, rows), *skipped, *([""] if skipped else [])]


def _ratios(results: dict[str, Any]) -> list[str]:
    by = {t["name"]: t for t in results["turns"] if not t["error"]}
    rows = []
    for ours, peers in PEERS.items():
        for peer, _ in peers:
            if ours in by and peer in by:
                r = paired_ratios(by[ours]["turns_per_s_per_rep"], by[peer]["turns_per_s_per_rep"])
                rows.append([ours, peer, f"**{_f(r.median)}x** ({_f(r.low)}-{_f(r.high)})"])
    return _table(["ours", "alternative", "turns/s ratio, median (min-max) over repetitions"], rows)


def _runner(results: dict[str, Any]) -> list[str]:
    runs = results.get("runner", [])
    by = {t["name"]: t for t in runs if not t["error"]}
    rows = []
    for t in runs:
        if t["error"]:
            rows.append([t["name"], t["server"], f"failed: {t['error']}", ""])
            continue
        tps = t["turns_per_s"]
        peer = next(
            (p for p, _ in PEERS.get(t["name"], []) if p in by and by[p]["server"] == t["server"]),
            None,
        )
        ratio = ""
        if peer is not None:
            r = paired_ratios(t["turns_per_s_per_rep"], by[peer]["turns_per_s_per_rep"])
            ratio = f"**{_f(r.median)}x** ({_f(r.low)}-{_f(r.high)}) vs {peer}"
        rows.append(
            [
                t["name"],
                t["server"],
                f"**{_f(tps['median'], 0)}** ({_f(tps['low'], 0)}-{_f(tps['high'], 0)})",
                ratio,
            ]
        )
    head = ["session", "server", "runner turns/s median (min-max)", "ratio over repetitions"]
    return _table(head, rows) if rows else ["(not run)", ""]


def _floors(results: dict[str, Any]) -> list[str]:
    rows = [[name, _f(s["p50_ms"], 3), _f(s["p99_ms"], 3)] for name, s in results["floors"].items()]
    return _table(["floor", "p50 ms", "p99 ms"], rows)


def _paired(results: dict[str, Any]) -> list[str]:
    rows = [
        [
            ours,
            p["floor"],
            _f(p["append"]["p50_ms"], 3),
            _f(p["floor_latency"]["p50_ms"], 3),
            f"**{_f(p['ratio']['median'])}x** ({_f(p['ratio']['low'])}-{_f(p['ratio']['high'])})",
        ]
        for ours, p in results.get("paired_floors", {}).items()
    ]
    head = ["ours", "floor", "append p50 ms", "floor p50 ms", "ratio, median (min-max)"]
    return _table(head, rows) if rows else ["(not run)", ""]


def _cells(by_size: dict[str, dict[str, float]]) -> list[str]:
    return [f"{_f(v['p50_ms'])} / {_f(v['p99_ms'])}" for v in by_size.values()]


def _growth(results: dict[str, Any]) -> list[str]:
    growth: dict[str, Any] = results.get("growth", {})
    listing: dict[str, Any] = results.get("listing", {})
    lines: list[str] = []
    if growth:
        rows = [
            [server, op, *_cells(g[op])]
            for server, g in growth.items()
            for op in ("append", "read")
        ]
        sizes = next(iter(growth.values()))["append"]
        head = ["backend", "op", *[f"p50 / p99 ms at {int(s):,} rows" for s in sizes]]
        lines += _table(head, rows)
    if listing:
        rows = [
            [server, *_cells(v["list"]), _cells(v["list_before_settle"])[-1]]
            for server, v in listing.items()
        ]
        sizes = list(next(iter(listing.values()))["list"])
        head = [
            "backend",
            *[f"first page p50 / p99 ms, {int(s):,} sessions" for s in sizes],
            f"{int(sizes[-1]):,} sessions, before the server settled",
        ]
        lines += _table(head, rows)
    return lines


def _adk(results: dict[str, Any]) -> list[str]:
    found: dict[str, Any] = results.get("adk", {})
    if not found:
        return []
    events = results.get("settings", {}).get("adk_events", "?")
    head = ["server", "service", "operation", f"p50 / p99 ms, a session of {events} events"]
    rows = [
        [server, name, op, *_cells({"": cell})]
        for server, services in found.items()
        for name, ops in services.items()
        for op, cell in ops.items()
    ]
    return _table(head, rows)


def _agent_framework(results: dict[str, Any]) -> list[str]:
    found: dict[str, Any] = results.get("agent_framework", {})
    if not found:
        return []
    turns = results.get("settings", {}).get("maf_turns", "?")
    head = ["provider", "operation", f"p50 / p99 ms, a conversation of {turns} turns"]
    rows = [
        [name, op, *_cells({"": cell})] for name, ops in found.items() for op, cell in ops.items()
    ]
    return _table(head, rows)


def _checkpoint_growth(results: dict[str, Any]) -> list[str]:
    found: dict[str, Any] = results.get("checkpoints", {})
    if not found:
        return []
    sizes = list(next(iter(found.values()))["latest"])
    rows = [
        [name, op, *_cells(c[key])]
        for name, c in found.items()
        for op, key in (("latest checkpoint", "latest"), ("list(limit=10)", "list10"))
    ]
    head = ["saver", "read", *[f"p50 / p99 ms, {int(s):,} checkpoints" for s in sizes]]
    return _table(head, rows)


def _tasks(side: dict[str, Any]) -> str:
    tps, p50 = side["turns_per_s"]["median"], side["append"]["p50_ms"]
    return f"{_f(tps, 0)} (append p50 {_f(p50)} ms)"


def _concurrency(results: dict[str, Any]) -> list[str]:
    rows = []
    for server, c in results.get("concurrency", {}).items():
        r = c["ratio"]
        ratio = f"**{_f(r['median'])}x** ({_f(r['low'])}-{_f(r['high'])})"
        rows.append([server, _tasks(c["single"]), _tasks(c["multi"]), ratio])
    group = results.get("group_commit") or {}
    for key in ("helix", "sdk"):
        if key in group:
            c = group[key]
            r = c["ratio"]
            ratio = f"**{_f(r['median'])}x** ({_f(r['low'])}-{_f(r['high'])})"
            name = "sqlite (FULL)" if key == "helix" else "SDK SQLiteSession (FULL)"
            rows.append([name, _tasks(c["single"]), _tasks(c["multi"]), ratio])
    lines = _table(["backend", "1 task turns/s", "16 tasks turns/s", "ratio (min-max)"], rows)
    if group:
        lines += [
            f"SQLite group commit at `FULL`: 16 tasks reach {_f(group['vs_own_1'])}x our own "
            f"1-task throughput and {_f(group['vs_sdk_16'])}x `SQLiteSession` with 16 tasks "
            f"(targets 4x and 4x); the machine's fsync (4 KiB `fdatasync`, median) took "
            f"{_f(group['fsync_ms'])} ms before and {_f(group['fsync_ms_after'])} ms after.",
            "",
        ]
    return lines


def _page(c: dict[str, Any], key: str) -> str:
    page = c.get(key)  # absent from results made before the inspector (or its full lists)
    return "-" if page is None else f"{_f(page['p50_ms'])} / {_f(page['p99_ms'])}"


def _context(results: dict[str, Any]) -> list[str]:
    rows = [
        [
            server,
            *(
                f"{_f(c[op]['p50_ms'])} / {_f(c[op]['p99_ms'])}"
                for op in ("grep_1mb", "read_range", "history_search")
            ),
            _page(c, "inspector_page"),
            _page(c, "inspector_full_page"),
        ]
        for server, c in results.get("context", {}).items()
    ]
    head = [
        "backend",
        "grep a 1 MB output, p50 / p99 ms",
        "read 100 of its lines",
        "search 100,000 rows of history",
        "open its inspector page",
        "open the page of a 10,000-row session (every record)",
    ]
    return _table(head, rows) if rows else []


def _scaling(results: dict[str, Any]) -> list[str]:
    scaling = results.get("scaling", {})
    rows = []
    for where, r in scaling.get("redis", {}).items():
        one, many = r["tasks"].values()
        single, multi = r["processes"].values()
        rows.append(
            [
                f"redis {where}",
                f"{_f(one, 0)} / {_f(many, 0)} (**{_f(many / one)}x**)",
                f"{_f(single['turns_per_s'], 0)} / {_f(multi['turns_per_s'], 0)} "
                f"(**{_f(multi['turns_per_s'] / single['turns_per_s'])}x**)",
                str(multi["errors"] + single["errors"]),
            ]
        )
    sqlite = scaling.get("sqlite", {})
    if sqlite:
        single, multi = sqlite.values()
        rows.append(
            [
                "sqlite, one file",
                "—",
                f"{_f(single['turns_per_s'], 0)} / {_f(multi['turns_per_s'], 0)} "
                f"(**{_f(multi['turns_per_s'] / single['turns_per_s'])}x**)",
                f"{single['errors'] + multi['errors']} {multi['error_kinds'] or ''}",
            ]
        )
    if not rows:
        return []
    lines = _table(["store", "turns/s 1 / 16 tasks", "turns/s 1 / 4 processes", "errors"], rows)
    slots = scaling.get("redis", {}).get("cluster", {}).get("slots")
    if slots:
        spread = ", ".join(f"{n:,}" for n in sorted(slots["per_master"].values()))
        lines += [
            f"{slots['sessions']:,} sessions on the cluster's masters: {spread} "
            f"(largest deviation from the mean {100 * slots['max_deviation']:.1f}%).",
            "",
        ]
    wide = scaling.get("postgres")
    if wide:
        a = wide["append"]
        lines += [
            f"Postgres, {wide['tasks']} tasks on a pool of {wide['pool']}: "
            f"{_f(wide['turns_per_s'], 0)} turns/s, append p50 {_f(a['p50_ms'])} ms, "
            f"p99 {_f(a['p99_ms'])} ms.",
            "",
        ]
    return lines


def _replication(results: dict[str, Any]) -> list[str]:
    rows = []
    for backend, r in results.get("replication", {}).items():
        names = [k for k in r if k != "ratio_p50"]
        without, with_wait = (r[k] for k in names)
        rows.append(
            [
                backend,
                f"{names[0]}: {_f(without['p50_ms'])} / {_f(without['p99_ms'])}",
                f"{names[1]}: {_f(with_wait['p50_ms'])} / {_f(with_wait['p99_ms'])}",
                f"**{_f(r['ratio_p50'])}x**",
            ]
        )
    if not rows:
        return []
    head = ["store", "append p50 / p99 ms, no wait", "waiting for a replica", "p50 ratio"]
    return _table(head, rows)


def _targets(results: dict[str, Any]) -> list[str]:
    rows = []
    for t in evaluate(results):
        value = f"{_f(t.value)}" if t.low == t.high else f"{_f(t.value)} ({_f(t.low)}-{_f(t.high)})"
        rows.append(
            [
                t.text,
                value,
                ("&ge; " if t.at_least else "&le; ") + _f(t.bound, 1),
                "met" if t.met else "**missed**",
            ]
        )
    return _table(["target", "measured", "bound", ""], rows)


def _conditions(results: dict[str, Any]) -> list[str]:
    m = results["meta"]
    return [f"* {key}: {value}" for key, value in m.items()] + [""]


def render(results: dict[str, Any]) -> str:
    """The generated part of ``docs/performance.md``."""
    s = results["settings"]
    parts = [
        f"Mode **{s['mode']}**: {s['repetitions']} repetitions x {s['turns']:,} turns per system "
        f"over {s['sessions']} sessions (after {s['warmup_turns']} warm-up turns).",
        "",
        "### Targets",
        "",
        *_targets(results),
        "### Turn workload (one client)",
        "",
        *_turns(results),
        "### Ratios against the alternatives",
        "",
        *_ratios(results),
        "### The Agents SDK's runner turn (`Runner.run` with each session)",
        "",
        *_runner(results),
        "### Server floors",
        "",
        *_floors(results),
        "### Append against its server floor, in pairs",
        "",
        *_paired(results),
        "### Cost growth",
        "",
        *_growth(results),
        "### LangGraph checkpoints on a long thread",
        "",
        *_checkpoint_growth(results),
        "### Google ADK sessions (`append_event`, `get_session`)",
        "",
        *_adk(results),
        "### Agent Framework chat history (`save_messages`, `get_messages`)",
        "",
        *_agent_framework(results),
        "### Concurrency",
        "",
        *_concurrency(results),
        "### Context store (docs/context-strategies.md)",
        "",
        *_context(results),
        "### Scaling out (docs/scaling.md)",
        "",
        *_scaling(results),
        "### Commits waiting for a replica (docs/scaling.md)",
        "",
        *_replication(results),
        "### Conditions of this run",
        "",
        *_conditions(results),
    ]
    return "\n".join(parts)


def write_json(results: dict[str, Any], path: Path) -> None:
    """Write the results file, targets included."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {**results, "targets": [t.as_dict() for t in evaluate(results)]}
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n")


def publish(results: dict[str, Any], page: Path) -> None:
    """Replace the text between the markers of ``page`` with :func:`render`'s tables."""
    text = page.read_text()
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{page} lacks the {BEGIN} … {END} markers")
    page.write_text(f"{head}{BEGIN}\n{render(results)}\n{END}{tail}")
