"""Puts the test helpers on sys.path and registers the fixtures of adk_fixtures.py
and adk_service_fixtures.py.

Stores and servers come from contract_tests/support (helix_backends.py,
helix_fixtures.py): one definition of "where is the test server". Kept to these lines
and left out of mypy, as in the other adapters.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from adk_fixtures import other_service, service, store, stores
from adk_service_fixtures import (
    artifact_stores,
    artifacts,
    memory,
    memory_stores,
)
from helix_fixtures import postgres_schema_url

__all__ = [
    "artifact_stores",
    "artifacts",
    "memory",
    "memory_stores",
    "other_service",
    "postgres_schema_url",
    "service",
    "store",
    "stores",
]
