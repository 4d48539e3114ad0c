"""The key providers and the opening of an encrypted store (docs/encryption.md)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from helix_agents.core import ChatMessage, MessageCommit, ValidationError, open_store
from helix_agents.core.backend import Engine
from helix_agents.core.encryption import (
    KEYS_ENV,
    EncryptedEngine,
    KeyProvider,
    LocalKeyring,
    encrypt,
    rotate_keys,
)
from helix_agents.core.encryption._aead import aead
from helix_agents.core.encryption._seal import SessionCipher
from helix_agents.core.errors import EncryptionKeyError, StoreUnavailableError

pytestmark = pytest.mark.anyio

A, B = LocalKeyring.new_key(), LocalKeyring.new_key()


def _b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


async def test_a_keyring_wraps_under_its_current_key_and_unwraps_under_any() -> None:
    ring = LocalKeyring({"a": A, "b": B})
    assert isinstance(ring, KeyProvider) and ring.current_key_id == "b"
    assert LocalKeyring({"a": A, "b": B}, current="a").current_key_id == "a"
    data = LocalKeyring.new_key()
    wrapped = await ring.wrap("a", data)
    assert data not in wrapped and await ring.unwrap("a", wrapped) == data
    with pytest.raises(EncryptionKeyError) as wrong:
        await ring.unwrap("b", wrapped)  # wrapped under another key
    assert wrong.value.key_id == "b" and wrong.value.code == "state_encryption_key"
    with pytest.raises(EncryptionKeyError) as unknown:
        await ring.unwrap("c", wrapped)
    assert unknown.value.key_id == "c" and "'c'" in str(unknown.value)
    assert "keys=['a', 'b']" in repr(ring) and _b64(A) not in repr(ring)


@pytest.mark.parametrize(
    ("keys", "current", "says"),
    [
        ({}, None, "at least one key"),
        ({"a": b"short"}, None, "32 bytes"),
        ({"": A}, None, "non-empty"),
        ({"a:b": A}, None, "without"),
        ({"a": A}, "z", "'z' is not one"),
    ],
)
def test_a_keyring_refuses_bad_keys(keys: dict[str, bytes], current: str | None, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        LocalKeyring(keys, current=current)


async def test_a_keyring_from_a_file_and_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"current": "a", "keys": {"a": _b64(A), "b": _b64(B)}}))
    from_file = LocalKeyring.from_file(path)
    assert from_file.current_key_id == "a"
    assert await from_file.unwrap("b", await LocalKeyring({"b": B}).wrap("b", A)) == A
    path.write_text("{not json")
    with pytest.raises(ValidationError, match="unreadable"):
        LocalKeyring.from_file(path)
    path.write_text(json.dumps({"keys": {"a": "***"}}))
    with pytest.raises(ValidationError, match="not valid base64"):
        LocalKeyring.from_file(path)

    assert KEYS_ENV == "HELIX_ENCRYPTION_KEYS"  # the name docs/encryption.md gives
    monkeypatch.setenv(KEYS_ENV, f"a:{_b64(A)}, b:{_b64(B)}")
    assert LocalKeyring.from_env().current_key_id == "b"
    for bad, says in (("", "holds no key"), ("a", "not an id:base64 pair")):
        monkeypatch.setenv(KEYS_ENV, bad)
        with pytest.raises(ValidationError, match=says):
            LocalKeyring.from_env()


async def test_open_store_encrypts_and_a_plain_store_refuses_the_session() -> None:
    row = ChatMessage(role="user", content="hello there")
    store = open_store("memory://enc-open", encryption=LocalKeyring({"a": A}))
    engine = getattr(store, "engine", None)
    assert isinstance(engine, EncryptedEngine)
    # Tracing names the store below: its system and namespace, before and after opening.
    assert (engine.system, engine.namespace) == ("helix.memory", "enc-open")
    async with store:
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=(row,)))
        assert await store.get_messages("s") == [row]
    async with open_store("memory://enc-open") as plain:
        with pytest.raises(EncryptionKeyError) as refused:
            await plain.get_messages("s")
        assert (refused.value.session_id, refused.value.key_id) == ("s", "a")
    with pytest.raises(ValidationError, match="StoreBase"):
        encrypt(object(), LocalKeyring({"a": A}))  # type: ignore[type-var]
    with pytest.raises(StoreUnavailableError):  # a closed store, before the arguments
        await rotate_keys(store, batch_size=0)


def test_a_record_that_does_not_open_is_refused_never_garbage() -> None:
    cipher = SessionCipher("s", aead(A), "s")
    sealed = cipher.seal("row", "the text")
    assert "the text" not in sealed and cipher.open("row", sealed) == "the text"
    other = SessionCipher("s", aead(B), "s")
    for opener, kind, text in (
        (other, "row", sealed),  # another data key
        (cipher, "state", sealed),  # another kind of record
        (SessionCipher("s", aead(A), "t"), "row", sealed),  # made for another session
        (cipher, "row", "the text"),  # written without the key
        (cipher, "row", "hx1:***"),  # not base64
        (cipher, "row", "hx1:" + sealed[5:]),  # cut
        (cipher, "row", None),
    ):
        with pytest.raises(EncryptionKeyError) as refused:
            opener.open(kind, text)
        assert refused.value.session_id == "s" and "'s'" in str(refused.value)


async def test_a_write_on_a_known_head_costs_no_extra_read() -> None:
    """The data key of a session just created, read or written is kept: a plain append
    is one apply, as without encryption (docs/architecture.md, round trips)."""
    store = open_store("memory://", encryption=LocalKeyring({"a": A}))
    engine = getattr(store, "engine", None)
    assert isinstance(engine, EncryptedEngine)
    reads: list[str] = []
    inner_snapshot = engine.inner.snapshot

    async def counted(session_id: str, want: Any) -> Any:
        reads.append(session_id)
        return await inner_snapshot(session_id, want)

    engine.inner.snapshot = counted  # type: ignore[method-assign]
    async with store:
        await store.create_session("s")
        for text in ("one", "two"):
            row = ChatMessage(role="user", content=text)
            await store.append_messages("s", MessageCommit(messages=(row,)))
        assert reads == []
        await store.update_session_metadata("s", {"m": 1})  # reads the key record as stored
        assert reads == ["s"]


def test_the_encrypted_engine_passes_every_primitive_of_the_seam() -> None:
    """A primitive the seam gains must be wrapped too: else the encrypted store would run
    the seam's default (or refuse) instead of the backend's own."""
    primitives = {n for n, v in vars(Engine).items() if callable(v) and not n.startswith("_")}
    assert "delete_at" in primitives and "erase_user" in primitives
    assert sorted(primitives - set(vars(EncryptedEngine))) == []
