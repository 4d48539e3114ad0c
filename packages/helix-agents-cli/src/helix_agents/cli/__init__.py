"""``helix-store``: the command line of helix-agents session stores (docs/cli.md)."""

from ._app import app, main
from ._errors import ExitCode

__all__ = ["ExitCode", "app", "main"]
