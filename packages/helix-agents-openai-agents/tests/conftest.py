"""Puts the test helpers on sys.path and registers the fixtures of helix_fixtures.py.

Kept to these lines and left out of mypy (pyproject.toml), since mypy names
every hyphen-pathed conftest.py plain ``conftest``; the fixtures it loads are checked.
"""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).with_name("sdk_suite")), str(Path(__file__).parent)]

from helix_fixtures import anyio_backend, other_store, store, stores  # noqa: E402

__all__ = ["anyio_backend", "other_store", "store", "stores"]
