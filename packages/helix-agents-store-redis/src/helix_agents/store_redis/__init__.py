"""helix-agents Redis session store: Redis, Redis Cluster and Sentinel, one Lua script per write."""

from .errors import ReplicationLagError
from .store import RedisStateStore, open_url

__all__ = ["RedisStateStore", "ReplicationLagError", "open_url"]
