"""One run: every phase in order, into one results document."""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .adk import measure_adk
from .agent_framework import measure_agent_framework
from .checkpoints import measure_checkpoints
from .concurrency import measure_concurrency
from .conditions import conditions
from .config import Servers, Settings
from .context import measure_context
from .floors import Floors, measure_paired
from .group_commit import measure_group_commit
from .growth import measure_growth, measure_listing
from .replication import measure_replication
from .scaling import measure_scaling
from .sdk_runner import measure_runner_turns
from .systems import NAMESPACE, all_subjects, graph_subjects, helix_subject, session_pairs
from .systems.ours import HelixSubject
from .throughput import measure_turns
from .workload import Subject

__all__ = ["PHASES", "run"]

log = logging.getLogger("bench")

PHASES = (
    "turns",
    "runner",
    "growth",
    "concurrency",
    "checkpoints",
    "context",
    "adk",
    "agent_framework",
    "scaling",
    "replication",
)
_OURS = ("memory", "sqlite", "postgres", "redis")


async def _open(subject: Subject, skipped: dict[str, str]) -> bool:
    try:
        await subject.open()
    except Exception as exc:
        log.warning("skipping %s: %s", subject.name, exc)
        skipped[subject.name] = f"{type(exc).__name__}: {exc}"
        return False
    return True


async def _turns(settings: Settings, servers: Servers, workdir: Path, out: dict[str, Any]) -> None:
    subjects = [s for s in all_subjects(servers, workdir) if await _open(s, out["skipped"])]
    floors = Floors(servers, workdir, f"{NAMESPACE}_floor")
    try:
        await floors.open({s.server for s in subjects})
        await floors.sample(50)
        floors.reset()
        share = max(1, settings.floor_samples // settings.repetitions)

        async def between() -> None:
            await floors.sample(share)

        results = await measure_turns(subjects, settings, between)
        live = [r.subject for r in results if r.error is None]
        out["paired_floors"] = await measure_paired(live, floors, settings)
    finally:
        for s in subjects:
            await s.close()
        await floors.close()
    out["turns"] = [r.as_dict() for r in results]
    out["floors"] = floors.summary()


async def _runner(settings: Settings, servers: Servers, workdir: Path, out: dict[str, Any]) -> None:
    subjects = [s for s in session_pairs(servers, workdir) if await _open(s, out["skipped"])]
    try:
        out["runner"] = await measure_runner_turns(subjects, settings)
    finally:
        for s in subjects:
            await s.close()


async def _per_backend(
    settings: Settings, servers: Servers, workdir: Path, out: dict[str, Any], phase: str
) -> None:
    for server in _OURS if phase in ("growth", "context") else ("postgres", "redis"):
        options = (
            {"max_size": settings.concurrency_tasks}
            if phase == "concurrency" and server == "postgres"
            else {}
        )
        subject: HelixSubject = helix_subject(server, servers, workdir, f"_{phase}", **options)
        if not await _open(subject, out["skipped"]):
            continue
        try:
            log.info("%s: %s", phase, subject.name)
            if phase == "growth":
                out["growth"][server] = await measure_growth(subject, settings)
                out["listing"][server] = await measure_listing(subject, settings)
            elif phase == "context":
                out["context"][server] = await measure_context(subject, settings)
            else:
                out["concurrency"][server] = await measure_concurrency(subject, settings)
        finally:
            await subject.close()


async def _checkpoints(
    settings: Settings, servers: Servers, workdir: Path, out: dict[str, Any]
) -> None:
    for subject in graph_subjects(servers, workdir, "_ckpt"):
        if not await _open(subject, out["skipped"]):
            continue
        try:
            log.info("checkpoints: %s", subject.name)
            out["checkpoints"][subject.name] = await measure_checkpoints(subject, settings)
        finally:
            await subject.close()


async def run(settings: Settings, servers: Servers, phases: tuple[str, ...]) -> dict[str, Any]:
    """Run ``phases`` and return the results document."""
    out: dict[str, Any] = {
        "settings": asdict(settings),
        "meta": await conditions(servers, "start"),
        "skipped": {},
        "turns": [],
        "floors": {},
        "paired_floors": {},
        "growth": {},
        "listing": {},
        "concurrency": {},
        "group_commit": {},
        "checkpoints": {},
        "context": {},
        "runner": [],
        "adk": {},
        "agent_framework": {},
        "scaling": {},
        "replication": {},
    }
    workdir = Path(tempfile.mkdtemp(prefix="helixbench-"))
    try:
        if "turns" in phases:
            await _turns(settings, servers, workdir, out)
        if "runner" in phases:
            await _runner(settings, servers, workdir, out)
        for phase in ("growth", "concurrency", "context"):
            if phase in phases:
                await _per_backend(settings, servers, workdir, out, phase)
        if "concurrency" in phases:
            out["group_commit"] = await measure_group_commit(settings, servers, workdir)
        if "checkpoints" in phases:
            await _checkpoints(settings, servers, workdir, out)
        if "adk" in phases:
            out["adk"] = await measure_adk(settings, servers, workdir)
        if "agent_framework" in phases:
            out["agent_framework"] = await measure_agent_framework(settings, servers, workdir)
        if "scaling" in phases:
            out["scaling"] = await measure_scaling(settings, servers, workdir)
        if "replication" in phases:
            out["replication"] = await measure_replication(settings, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    out["meta"].update(await conditions(servers, "end"))
    return out
