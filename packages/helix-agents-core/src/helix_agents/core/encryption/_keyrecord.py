"""A session's key record in core's record of its metadata (``_helix.k``): its data key
wrapped under a key provider's key (docs/encryption.md)."""

from __future__ import annotations

import base64
import binascii
import secrets
from typing import Any

from ..errors import EncryptionKeyError
from ..messages import JsonObject
from ..sessiondoc import KEY_RECORD, RESERVED
from ._aead import KEY_BYTES, aead
from ._keys import KeyProvider
from ._seal import SessionCipher

__all__ = ["key_record", "new_key", "unwrap", "with_key", "without_key"]


def key_record(metadata: JsonObject) -> dict[str, Any] | None:
    """The session's key record (``{"i": key id, "w": wrapped key, "s": origin}``), if any."""
    own = metadata.get(RESERVED)
    if isinstance(own, dict):
        record = own.get(KEY_RECORD)
        if isinstance(record, dict):
            return record
    return None


def without_key(metadata: JsonObject) -> JsonObject:
    """``metadata`` without the key record (which it holds)."""
    stored = metadata[RESERVED]
    assert isinstance(stored, dict)  # key_record found the record in it
    own = dict(stored)
    del own[KEY_RECORD]
    out = {k: v for k, v in metadata.items() if k != RESERVED}
    if own:
        out[RESERVED] = own
    return out


def with_key(metadata: JsonObject, record: dict[str, Any]) -> JsonObject:
    """``metadata`` with ``record`` as its key record."""
    own = metadata.get(RESERVED)
    out = dict(metadata)
    out[RESERVED] = {**(own if isinstance(own, dict) else {}), KEY_RECORD: record}
    return out


async def unwrap(keys: KeyProvider, session_id: str, record: dict[str, Any]) -> bytes:
    """The session's data key, unwrapped by ``keys``; refused with a typed error."""
    key_id = record.get("i")
    try:
        wrapped = base64.b64decode(str(record.get("w")), validate=True)
        data_key = await keys.unwrap(str(key_id), wrapped)
    except (binascii.Error, ValueError, EncryptionKeyError) as exc:
        raise EncryptionKeyError(
            f"session {session_id!r}: its data key does not open under key {key_id!r}: {exc}",
            session_id=session_id,
            key_id=None if key_id is None else str(key_id),
        ) from None
    if len(data_key) != KEY_BYTES:
        raise EncryptionKeyError(
            f"session {session_id!r}: key {key_id!r} unwrapped no data key",
            session_id=session_id,
            key_id=str(key_id),
        )
    return data_key


async def new_key(keys: KeyProvider, session_id: str) -> tuple[dict[str, Any], SessionCipher]:
    """A new session's random data key: its record (wrapped under ``keys``' current key)
    and its cipher."""
    data_key = secrets.token_bytes(KEY_BYTES)
    key_id = keys.current_key_id
    wrapped = await keys.wrap(key_id, data_key)
    record = {"i": key_id, "w": base64.b64encode(wrapped).decode("ascii"), "s": session_id}
    return record, SessionCipher(session_id, aead(data_key), session_id)
