"""helix-agents in-memory session store: the reference behaviour, for tests and prototypes."""

from ._state import MemoryData
from .store import MemoryStateStore, open_url

__all__ = ["MemoryData", "MemoryStateStore", "open_url"]
