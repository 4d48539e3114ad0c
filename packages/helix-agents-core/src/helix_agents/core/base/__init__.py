"""``StoreBase`` and the helpers of its methods (docs/architecture.md, "One engine")."""

from ._plumbing import MAX_REPLANS, row_message
from .store import StoreBase

__all__ = ["MAX_REPLANS", "StoreBase", "row_message"]
