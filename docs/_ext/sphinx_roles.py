"""A Griffe extension: the docstrings' Sphinx roles (:class:`~helix_agents.core.X`,
:meth:`name`) become links of the API reference, or code where nothing is documented."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|attr|exc|data|mod|obj):`(~?)([\w.]+)`")


def _local(obj: griffe.Object, name: str) -> str | None:
    """The path a bare ``name`` in ``obj``'s docstring stands for: a member of ``obj`` or
    of an enclosing scope, an import followed to where it is defined."""
    scope: griffe.Object | None = obj
    while scope is not None:
        if name in scope.members:
            member = scope.members[name]
            return member.target_path if isinstance(member, griffe.Alias) else member.path
        scope = scope.parent
    return None


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    short, name = match.groups()
    code = f"`{name.rsplit('.', 1)[-1] if short else name}`"
    if "._" in name:  # a private module or name: nothing to link to
        return code
    if "." in name:  # written out in full: a broken one fails the strict build
        return f"[{code}][{name}]"
    # Found by scope, it may be a name the reference does not show: link only if it does.
    target = _local(obj, name)
    if target is None or "._" in target:
        return code
    return f'<autoref identifier="{target}" optional><code>{code[1:-1]}</code></autoref>'


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx cross-reference roles into mkdocs-autorefs links."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite every docstring of the package once it is loaded whole."""
        self._rewrite(pkg)

    def _rewrite(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(lambda m: _link(obj, m), obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                assert isinstance(member, griffe.Object)
                self._rewrite(member)
