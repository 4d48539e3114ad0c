"""helix-agents Redis session store: Redis and Redis Cluster, one Lua script per write."""

from .store import RedisStateStore, open_url

__all__ = ["RedisStateStore", "open_url"]
