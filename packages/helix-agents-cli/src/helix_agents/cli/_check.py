"""``check``: the contract suite against a live store, in throwaway namespaces.

It runs pytest with the contract package's plugin in a subprocess (its own
interpreter state, its own event loops); the plugin gives each test a fresh
namespace and deletes the sessions it made (docs/contract.md). The namespaces
share a prefix of this run's own, so what a namespace leaves besides sessions
(a Postgres schema, a SQLite sibling file) is dropped afterwards.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from helix_agents.core import open_store
from helix_agents.core.backend import redact_url

from ._errors import CliError, ExitCode
from ._render import out_console, print_json

__all__ = ["check_store"]

_SUMMARY = re.compile(r"^=*\s*(?P<text>(\d+ \w+(, )?)+ in [\d.]+s.*?)\s*=*$")


def _scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def _suite_url(url: str) -> str:
    """Postgres schemas of the run must be created: ask the store to migrate them."""
    if _scheme(url) in ("postgresql", "postgres") and "auto_migrate=" not in url:
        return url + ("&" if "?" in url else "?") + "auto_migrate=true"
    return url


async def _probe(url: str, namespace: str) -> None:
    """Reach the store once, so an unreachable one is one clear error, not N failures."""
    async with open_store(url, namespace=namespace) as store:
        await store.get_session("helix-check-probe")


def _drop_leftovers(url: str, prefix: str) -> None:
    scheme = _scheme(url)
    if scheme == "sqlite":
        from helix_agents.store_sqlite import database_file

        file = Path(database_file(url))
        for left in file.parent.glob(f"{file.stem}.{prefix}*"):
            left.unlink(missing_ok=True)
    elif scheme in ("postgresql", "postgres"):
        import psycopg
        from psycopg import sql

        from helix_agents.store_postgres import conninfo_and_schema

        with psycopg.connect(conninfo_and_schema(url)[0], autocommit=True) as conn:
            found = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", [prefix]
            ).fetchall()
            for (schema,) in found:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def check_store(url: str, *, select: str | None, verbose: bool, as_json: bool) -> ExitCode:
    """Run the suite; ``ExitCode.OK`` when every selected test passed, else ``FAILED``."""
    if importlib.util.find_spec("helix_agents.contract") is None:
        raise CliError(
            "check needs the contract suite: pip install 'helix-agents-cli[check]'", ExitCode.USAGE
        )
    suite_url = _suite_url(url)
    prefix = f"helix_check_{uuid.uuid4().hex[:10]}_"
    asyncio.run(_probe(suite_url, prefix + "probe"))
    try:
        # An empty directory: no project's pytest configuration or tests get in the way.
        # It is the user's alone (0700), and the URL reaches the child in a file there:
        # argv and the environment of a process are visible to others (ps, /proc).
        with tempfile.TemporaryDirectory(prefix="helix-check-") as here:
            url_file = Path(here, "store-url")
            url_file.touch(mode=0o600)
            url_file.write_text(suite_url, encoding="utf-8")
            args = [sys.executable, "-m", "pytest", "-p", "helix_agents.contract.plugin"]
            args += ["--store-url-file", str(url_file), "--store-namespace-prefix", prefix]
            args += ["-p", "no:cacheprovider", "-q", "-rf"]
            if select:
                args += ["-k", select]
            done = subprocess.run(args, cwd=here, capture_output=True, text=True, check=False)
    finally:
        _drop_leftovers(url, prefix)
    output = redact_url(done.stdout + done.stderr)
    failed = [line[len("FAILED ") :] for line in output.splitlines() if line.startswith("FAILED ")]
    summary = next(
        (m["text"] for line in reversed(output.splitlines()) if (m := _SUMMARY.match(line))),
        output.strip().splitlines()[-1] if output.strip() else f"pytest exited {done.returncode}",
    )
    ok = done.returncode == 0
    if done.returncode not in (0, 1):
        # Not a verdict on the store: the suite could not run (bad URL, no server, usage).
        raise CliError(f"the contract suite could not run: {summary}", ExitCode.ERROR)
    if as_json:
        print_json({"store": redact_url(url), "ok": ok, "summary": summary, "failed": failed})
    else:
        console = out_console()
        if verbose:
            console.print(output, markup=False, soft_wrap=True)
        verdict = "passes the contract" if ok else "FAILS the contract"
        console.print(f"{redact_url(url)} {verdict}: {summary}", markup=False, soft_wrap=True)
        for name in failed:
            console.print(f"  failed: {name}", markup=False, soft_wrap=True)
    return ExitCode.OK if ok else ExitCode.FAILED
