"""Encryption at rest (docs/encryption.md): a session's records sealed with AES-256-GCM
under its own data key, wrapped under a :class:`KeyProvider`'s key-encryption key.

Needs the ``encryption`` extra (``pip install 'helix-agents-core[encryption]'``).
"""

from __future__ import annotations

from typing import TypeVar

from ..base import StoreBase
from ..errors import ValidationError
from ..protocol import SessionStateStore
from ..sessiondoc import KEY_RECORD
from ._engine import EncryptedEngine
from ._keys import KEYS_ENV, KeyProvider, LocalKeyring

__all__ = [
    "KEYS_ENV",
    "KEY_RECORD",
    "ROTATE_BATCH",
    "EncryptedEngine",
    "KeyProvider",
    "LocalKeyring",
    "encrypt",
    "rotate_keys",
]

_S = TypeVar("_S", bound=SessionStateStore)
ROTATE_BATCH = 100
"""How many sessions :func:`rotate_keys` reads a listing page of, by default."""


def encrypt(store: _S, keys: KeyProvider) -> _S:
    """``store`` (a :class:`~helix_agents.core.backend.StoreBase` not yet opened) with its
    engine wrapped in an :class:`EncryptedEngine` under ``keys``; returns the same store."""
    if not isinstance(keys, KeyProvider):
        raise ValidationError(f"encryption must be a KeyProvider, not {type(keys).__name__}")
    if not isinstance(store, StoreBase):
        raise ValidationError(
            f"encryption needs a store built on StoreBase, not {type(store).__name__}"
        )
    if store._state != "new" or isinstance(store.engine, EncryptedEngine):
        raise ValidationError("encrypt() takes a store not yet opened nor encrypted")
    store.engine = EncryptedEngine(store.engine, keys)
    return store


async def rotate_keys(store: SessionStateStore, *, batch_size: int = ROTATE_BATCH) -> int:
    """Rewrap every session's data key under the provider's current key, ``batch_size``
    sessions a read, while the store serves; how many were rewrapped (ENC-5)."""
    if not isinstance(store, StoreBase) or not isinstance(store.engine, EncryptedEngine):
        raise ValidationError("rotate_keys needs a store opened with encryption")
    store.engine.check_serving()
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError(f"batch_size must be a positive integer, got {batch_size!r}")
    return await store.engine.rotate(batch_size)
