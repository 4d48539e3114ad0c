"""Puts the test helpers on sys.path and registers the fixtures of mcp_fixtures.py.

Stores and servers come from contract_tests/support (helix_backends.py,
helix_fixtures.py): one definition of "where is the test server". Kept to these lines
and left out of mypy, as in the other adapters.
"""

import sys
from pathlib import Path

_HERE = Path(__file__).parent
sys.path[:0] = [str(_HERE / "sdk_suite"), str(_HERE)]

from mcp_fixtures import other_store, store, stores  # noqa: E402

__all__ = ["other_store", "store", "stores"]
