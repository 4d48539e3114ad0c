"""The connect, TLS, fault and secrets tests again, with libpq and the servers speaking German.

libpq translates its messages by the client's locale and the server by its
``lc_messages``: the store must tell a refusal's kind without reading English.
The child process speaks German through ``LANGUAGE=de`` (``LC_ALL=C.UTF-8``
needs no generated locale) and calls ``setlocale`` as a localized application
does; it uses psycopg's pure-Python implementation, whose libpq is the
system's, with the system's translations (the binary wheel's libpq has none).
The private servers it starts inherit the environment, so they speak German too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helix_agents.contract import backend_unavailable

from .speaking import LANGUAGE_ENV

HERE = Path(__file__).parent
GERMAN_ENV = {"PSYCOPG_IMPL": "python", "LANGUAGE": "de", "LC_ALL": "C.UTF-8", LANGUAGE_ENV: "de"}
MODULES = ("connect", "tls", "faults", "config")
# Run in the child: localized, as an application that calls setlocale.
LOCALIZED = "import locale, sys; locale.setlocale(locale.LC_ALL, ''); "
PYTEST = LOCALIZED + "import pytest; sys.exit(pytest.main(sys.argv[1:]))"
REFUSED = LOCALIZED + (
    "import psycopg\n"
    "try:\n    psycopg.connect('host=127.0.0.1 port=1 connect_timeout=2')\n"
    "except psycopg.Error as exc:\n    print(exc)"
)


def _child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **GERMAN_ENV},
        cwd=HERE.parents[2],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_connect_tests_pass_in_german() -> None:
    """Every refusal keeps its kind and retry advice when nothing is said in English."""
    probe = _child(REFUSED)
    if "Verbindung" not in probe.stdout:
        backend_unavailable(
            "libpq does not speak German here (Debian: libpq5's translations, "
            f"and psycopg's Python implementation): {probe.stdout or probe.stderr}"
        )
    files = [str(HERE / f"test_postgres_{name}.py") for name in MODULES]
    run = _child(PYTEST, *files, "-q", "-p", "no:randomly", "-p", "no:cacheprovider")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert " passed" in out and " skipped" not in out, out
