"""Puts the test helpers on sys.path and registers the shared backend fixtures.

These tests run in the crewai overlay (tests/test_crewai_env.py); stores and servers
come from contract_tests/support as for every adapter. Kept to these lines and left out
of mypy, as in the other adapters.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "sdk_suite"))

from crewai_fixtures import other, persistence
from helix_fixtures import postgres_schema_url, stores

__all__ = ["other", "persistence", "postgres_schema_url", "stores"]
