"""``serve``: the session inspector, a local web app over a store (docs/inspector.md).

Needs the ``serve`` extra: ``pip install 'helix-agents-cli[serve]'``.
"""

from ._run import serve_store
from ._web import inspector_app

__all__ = ["inspector_app", "serve_store"]
