"""AES-256-GCM boxes over ``cryptography`` (the ``encryption`` extra), imported on use."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from ..errors import ValidationError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KEY_BYTES", "aead", "open_box", "seal_box"]

KEY_BYTES = 32
"""The length of every key: AES-256."""
_NONCE = 12


def aead(key: bytes) -> AESGCM:
    """The cipher of ``key``; without ``cryptography`` a :class:`ValidationError` naming
    the extra to install."""
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ValidationError(
            "encryption at rest needs cryptography: pip install 'helix-agents-core[encryption]'"
        ) from None
    return AESGCM(key)


def seal_box(box: AESGCM, data: bytes, aad: bytes) -> bytes:
    """``data`` sealed under ``box`` with ``aad``: a random nonce, then the ciphertext."""
    nonce = secrets.token_bytes(_NONCE)
    return nonce + box.encrypt(nonce, data, aad)


def open_box(box: AESGCM, sealed: bytes, aad: bytes) -> bytes | None:
    """What :func:`seal_box` sealed; ``None`` if the key, the ``aad`` or the bytes differ."""
    from cryptography.exceptions import InvalidTag

    if len(sealed) < _NONCE + 16:
        return None
    try:
        return box.decrypt(sealed[:_NONCE], sealed[_NONCE:], aad)
    except InvalidTag:
        return None
