"""Key-encryption keys: the :class:`KeyProvider` protocol and :class:`LocalKeyring`
(docs/encryption.md)."""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import EncryptionKeyError, ValidationError
from ._aead import KEY_BYTES, aead, open_box, seal_box

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KEYS_ENV", "KeyProvider", "LocalKeyring"]

KEYS_ENV = "HELIX_ENCRYPTION_KEYS"
"""The variable ``LocalKeyring.from_env`` reads: ``id:base64,id:base64`` (last: current)."""


@runtime_checkable
class KeyProvider(Protocol):
    """Wraps and unwraps sessions' data keys under named key-encryption keys.

    ``current_key_id`` names the key new data keys are wrapped under; ``unwrap``
    must still open data keys wrapped under older ids it keeps (rotation, ENC-5).
    Both raise :class:`~helix_agents.core.errors.EncryptionKeyError` for an unknown id
    or a wrapped key that does not open. A provider over a KMS implements the same.
    """

    @property
    def current_key_id(self) -> str:
        """The id of the key new data keys are wrapped under."""
        ...

    async def wrap(self, key_id: str, data_key: bytes) -> bytes:
        """``data_key`` wrapped under the key ``key_id``."""
        ...

    async def unwrap(self, key_id: str, wrapped: bytes) -> bytes:
        """The data key ``wrap`` wrapped under ``key_id``."""
        ...


class LocalKeyring:
    """Key-encryption keys held in this process (AES-256-GCM, 32 bytes each): for tests
    and small deployments; ``current`` defaults to the last key given."""

    def __init__(self, keys: Mapping[str, bytes], *, current: str | None = None) -> None:
        if not isinstance(keys, Mapping) or not keys:
            raise ValidationError("a LocalKeyring needs at least one key")
        for key_id, key in keys.items():
            if not isinstance(key_id, str) or not key_id or ":" in key_id or "," in key_id:
                raise ValidationError(
                    f"key id {key_id!r} must be a non-empty string without ':' or ','"
                )
            if not isinstance(key, bytes) or len(key) != KEY_BYTES:
                raise ValidationError(f"key {key_id!r} must be {KEY_BYTES} bytes")
        chosen = list(keys)[-1] if current is None else current
        if chosen not in keys:
            raise ValidationError(f"current key id {chosen!r} is not one of the keyring's keys")
        self._keys = {key_id: aead(key) for key_id, key in keys.items()}
        self._current = chosen

    @staticmethod
    def new_key() -> bytes:
        """A fresh random key for the keyring."""
        return secrets.token_bytes(KEY_BYTES)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> LocalKeyring:
        """Keys from a JSON file ``{"current": id, "keys": {id: base64}}``."""
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            keys = {key_id: _b64(key_id, text) for key_id, text in doc["keys"].items()}
            current = doc.get("current")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValidationError(f"keyring file {str(path)!r} is unreadable: {exc}") from None
        return cls(keys, current=current)

    @classmethod
    def from_env(cls, name: str = KEYS_ENV) -> LocalKeyring:
        """Keys from the variable ``name``: ``id:base64`` pairs, comma-separated, the last
        one current."""
        text = os.environ.get(name, "")
        keys: dict[str, bytes] = {}
        for pair in filter(None, (p.strip() for p in text.split(","))):
            key_id, sep, encoded = pair.partition(":")
            if not sep:
                raise ValidationError(f"${name}: {key_id!r} is not an id:base64 pair")
            keys[key_id] = _b64(key_id, encoded)
        if not keys:
            raise ValidationError(f"${name} holds no key")
        return cls(keys)

    @property
    def current_key_id(self) -> str:
        """The id of the key new data keys are wrapped under."""
        return self._current

    async def wrap(self, key_id: str, data_key: bytes) -> bytes:
        """``data_key`` wrapped under ``key_id``."""
        return seal_box(self._key(key_id), data_key, _purpose(key_id))

    async def unwrap(self, key_id: str, wrapped: bytes) -> bytes:
        """The data key wrapped under ``key_id``; a key that does not open it is refused."""
        opened = open_box(self._key(key_id), wrapped, _purpose(key_id))
        if opened is None:
            raise EncryptionKeyError(
                f"key {key_id!r} does not open the data key wrapped under it", key_id=key_id
            )
        return opened

    def _key(self, key_id: str) -> AESGCM:
        try:
            return self._keys[key_id]
        except KeyError:
            raise EncryptionKeyError(f"the keyring has no key {key_id!r}", key_id=key_id) from None

    def __repr__(self) -> str:
        return f"LocalKeyring(keys={sorted(self._keys)!r}, current={self._current!r})"


def _purpose(key_id: str) -> bytes:
    return b"helix-agents/data-key/" + key_id.encode()


def _b64(key_id: str, text: object) -> bytes:
    if not isinstance(text, str):
        raise ValidationError(f"key {key_id!r} must be base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(f"key {key_id!r} is not valid base64") from None
