"""The end of a store's ``async with``: one ``__aexit__`` that closes it.

Opening differs between backends (a pool, two connections, scripts, a check),
so each store keeps its own ``__aenter__`` and ``close``; leaving the block is
the same everywhere, and :class:`ClosesOnExit` gives it once.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

__all__ = ["ClosesOnExit"]


class _Closable(Protocol):
    async def close(self) -> None: ...


class ClosesOnExit:
    """``__aexit__`` for a store class: leaving ``async with store`` awaits ``store.close()``.

    The block's exception, if any, is never suppressed.
    """

    __slots__ = ()

    async def __aexit__(
        self: _Closable,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the store, whether or not the block raised."""
        await self.close()
