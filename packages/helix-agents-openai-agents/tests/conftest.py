"""Puts the test helpers on sys.path and registers the shared backend fixtures.

Stores and servers come from contract_tests/support (helix_backends.py,
helix_fixtures.py): one definition of "where is the test server". Kept to these lines
and left out of mypy (pyproject.toml), since mypy names every hyphen-pathed
conftest.py plain ``conftest``; the fixtures it loads are checked.
"""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).with_name("sdk_suite")), str(Path(__file__).parent)]

from helix_fixtures import other_store, postgres_schema_url, store, stores  # noqa: E402

__all__ = ["other_store", "postgres_schema_url", "store", "stores"]
