"""Puts the test helpers on sys.path and registers the fixtures of maf_fixtures.py.

Stores and servers come from contract_tests/support (helix_backends.py,
helix_fixtures.py): one definition of "where is the test server". Kept to these lines
and left out of mypy, as in the other adapters.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from maf_fixtures import other_store, store, stores, subject

__all__ = ["other_store", "store", "stores", "subject"]
