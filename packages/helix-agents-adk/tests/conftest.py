"""Puts the test helpers on sys.path and registers the fixtures of adk_fixtures.py.

The servers are found by the OpenAI adapter's helix_backends.py (one definition of
"where is the test server"). Kept to these lines and left out of mypy, as in that
package (mypy names every hyphen-pathed conftest.py plain ``conftest``).
"""

import sys
from pathlib import Path

_HERE = Path(__file__).parent
_BACKENDS = _HERE.parents[1] / "helix-agents-openai-agents" / "tests" / "sdk_suite"
sys.path[:0] = [str(_BACKENDS), str(_HERE)]

from adk_fixtures import anyio_backend, other_service, service, stores  # noqa: E402

__all__ = ["anyio_backend", "other_service", "service", "stores"]
