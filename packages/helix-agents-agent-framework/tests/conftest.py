"""Puts the test helpers on sys.path and registers the fixtures of maf_fixtures.py.

Stores and servers come from the OpenAI adapter's test helpers (helix_backends.py,
helix_fixtures.py): one definition of "where is the test server". Kept to these lines
and left out of mypy, as in that package (mypy names every hyphen-pathed conftest.py
plain ``conftest``).
"""

import sys
from pathlib import Path

_HERE = Path(__file__).parent
_OAI_TESTS = _HERE.parents[1] / "helix-agents-openai-agents" / "tests"
sys.path[:0] = [str(_OAI_TESTS / "sdk_suite"), str(_OAI_TESTS), str(_HERE)]

from maf_fixtures import anyio_backend, other_store, store, stores, subject  # noqa: E402

__all__ = ["anyio_backend", "other_store", "store", "stores", "subject"]
