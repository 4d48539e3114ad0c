"""A complete minimal session store, one JSON document per session (docs/backends/writing.md)."""

from .store import JsonDocumentStore

__all__ = ["JsonDocumentStore"]
