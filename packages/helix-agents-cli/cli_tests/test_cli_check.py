"""``check`` through the installed command: a verdict, and nothing left behind."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
import redis

from helix_agents.contract import SessionStoreContract
from helix_agents.contract._base import rule_tests

from .conftest import Helix, run_helix

# A few rules keep these fast; the whole suite runs the same way.
RULES = "SES_1 or MSG_1"
# What `-k RULES` selects of the suite's rule tests (and leaves out, with the state machine).
SELECTED = sum(1 for name in rule_tests(SessionStoreContract) if "SES_1" in name or "MSG_1" in name)
LEFT_OUT = len(rule_tests(SessionStoreContract)) + 1 - SELECTED


@pytest.mark.parametrize("backend", ["sqlite_url", "pg_url", "redis_url"])
def test_check_passes_a_good_store_and_cleans_up(
    helix: Helix, backend: str, request: pytest.FixtureRequest, pg_server: str, tmp_path: Path
) -> None:
    url: str = request.getfixturevalue(backend)
    before = _check_schemas(pg_server)
    done = helix("check", url, "-k", RULES, "--json")
    assert done.code == 0, done.err + done.out
    verdict = json.loads(done.out)
    assert verdict["ok"] is True and verdict["failed"] == []
    assert f"{SELECTED} passed, {LEFT_OUT} deselected" in verdict["summary"]
    assert sorted(p.name for p in tmp_path.iterdir() if ".helix_check_" in p.name) == []
    # Only schemas this check made count: the server may hold others' (an interrupted run's).
    assert _check_schemas(pg_server) - before == set()
    if backend == "redis_url":  # the prefix is the test's own: any key under it is a leftover
        assert _redis_keys(url) == []


def _redis_keys(url: str) -> list[bytes]:
    prefix = parse_qs(urlsplit(url).query)["key_prefix"][0]
    with redis.Redis.from_url(url.split("?", 1)[0]) as client:
        return list(client.scan_iter(match=f"{prefix}*"))


def _check_schemas(pg_server: str) -> set[str]:
    with psycopg.connect(pg_server) as conn:
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'helix\\_check\\_%'"
        ).fetchall()
    return {str(name) for (name,) in rows}


def test_check_reports_an_unreachable_store_in_one_line(helix: Helix) -> None:
    done = helix("check", "redis://:s3cret@127.0.0.1:1/0", "-k", RULES)
    assert done.code == 4 and done.out == ""
    assert done.err.count("\n") == 1 and "s3cret" not in done.err


def test_check_keeps_the_password_out_of_its_childs_argv_and_environment(
    pg_url: str, tmp_path: Path
) -> None:
    # Trust authentication ignores a password, so one can ride in the URL and be looked for.
    secret = "pw-" + tmp_path.name[-8:]
    parts = urlsplit(pg_url)
    url = parts._replace(
        netloc=f"{parts.username or 'postgres'}:{secret}@{parts.hostname}:{parts.port or 5432}"
    ).geturl()
    seen: list[tuple[bytes, bytes]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for proc in Path("/proc").iterdir():
                try:
                    argv = (proc / "cmdline").read_bytes()
                    if b"helix_agents.contract.plugin" in argv:
                        seen.append((argv, (proc / "environ").read_bytes()))
                except OSError:
                    continue
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        done = run_helix("check", url, "-k", RULES, "--json")
    finally:
        stop.set()
        watcher.join()
    assert done.code == 0, done.err + done.out
    assert seen, "the contract suite's child process was never seen"
    assert all(secret.encode() not in argv + env for argv, env in seen)
    assert secret not in done.out + done.err
