"""Errors of the context layer; each has a code the agent's tool result can carry.

::

    StateStoreError
     ├── OutputNotFoundError             context_output_not_found
     └── ValidationError
          ├── InvalidPatternError         context_invalid_pattern
          └── UnknownToolSourceError      context_unknown_tool_source
"""

from __future__ import annotations

from ..errors import StateStoreError, ValidationError

__all__ = ["InvalidPatternError", "OutputNotFoundError", "UnknownToolSourceError"]


class OutputNotFoundError(StateStoreError):
    """The session holds no stored output with this id."""

    code = "context_output_not_found"


class InvalidPatternError(ValidationError):
    """A grep pattern the linear-time engine refuses (bad syntax, backreference, too large)."""

    code = "context_invalid_pattern"


class UnknownToolSourceError(ValidationError):
    """An activation named a tool source the catalog does not have."""

    code = "context_unknown_tool_source"
