"""ENC-1..ENC-6: encryption at rest (docs/encryption.md), on every store built on
``StoreBase``, each opened encrypted through ``encrypt`` with a ``LocalKeyring``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio
import pytest

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.encryption import EncryptedEngine, LocalKeyring, encrypt, rotate_keys
from helix_agents.core.errors import EncryptionKeyError, lookup
from helix_agents.core.seam import Want
from helix_agents.core.transfer import export_lines, import_lines

from ._base import StoreFactory, rule
from ._helpers import commit, snapshot, user
from .encryption_scan import PLAIN, RETAIN, check_plain_records, write_plain_records

_OLD = LocalKeyring.new_key()
_NEW = LocalKeyring.new_key()


def _keys(*ids: str) -> LocalKeyring:
    """A keyring of the rules' keys ``old`` and ``new``; the last named is current."""
    known = {"old": _OLD, "new": _NEW}
    return LocalKeyring({key_id: known[key_id] for key_id in ids})


def _on(
    store_factory: StoreFactory, keys: LocalKeyring | None, **options: Any
) -> SessionStateStore:
    """A store from the factory, encrypted under ``keys`` (``None``: plain), also when the
    suite runs with encryption on (the factory's own is taken off)."""
    store = store_factory(**options)
    engine = getattr(store, "engine", None)
    if isinstance(engine, EncryptedEngine):
        cast(Any, store).engine = engine.inner
    return store if keys is None else encrypt(store, keys)


def _inner(store: SessionStateStore) -> Any:
    engine = getattr(store, "engine", None)
    assert isinstance(engine, EncryptedEngine)
    return engine.inner


async def _stored(store: SessionStateStore, sid: str) -> str:
    """Every record the engine under the encrypted one holds of ``sid``, as text."""
    dump = await _inner(store).dump(sid)
    assert dump is not None
    return repr(dump)


async def _key_id(store: SessionStateStore, sid: str) -> str:
    """The key id the session's data key is wrapped under, as stored."""
    head = await _inner(store).snapshot(sid, _HEAD)
    key_id: str = head.metadata["_helix"]["k"]["i"]
    return key_id


async def _refused_key(call: Any, sid: str) -> EncryptionKeyError:
    with pytest.raises(EncryptionKeyError) as caught:
        await call()
    assert caught.value.code == "state_encryption_key"
    assert lookup("state_encryption_key") is EncryptionKeyError
    assert caught.value.session_id == sid and sid in str(caught.value)
    return caught.value


_HEAD = Want()


class EncryptionRules:
    """Records sealed under per-session data keys, opened on read; keys and rotation."""

    @rule("ENC-1", requires=("engine", "retention"))
    async def test_ENC_1_an_encrypted_store_reads_back_what_it_wrote(
        self, store_factory: StoreFactory
    ) -> None:
        async with _on(store_factory, _keys("new"), max_messages=RETAIN) as store:
            output_id = await write_plain_records(store, "enc1")
            await check_plain_records(store, "enc1", output_id)
        # Another instance, with the same keys and no data key kept yet, reads it too.
        async with _on(store_factory, _keys("new"), max_messages=RETAIN) as other:
            await check_plain_records(other, "enc1", output_id)

    @rule("ENC-2", requires="engine")
    async def test_ENC_2_the_engine_below_holds_none_of_the_text(
        self, store_factory: StoreFactory
    ) -> None:
        async with (
            _on(store_factory, _keys("new"), max_messages=RETAIN) as store,
            _on(store_factory, None, max_messages=RETAIN) as plain,
        ):
            await write_plain_records(store, "sealed")
            assert PLAIN not in await _stored(store, "sealed")
            # The same records written plain hold it: the scan sees text where it is.
            await write_plain_records(plain, "plain")
            assert PLAIN in await _stored(store, "plain")

    @rule("ENC-3", requires="engine")
    async def test_ENC_3_own_data_keys_never_shown_a_clone_shares_its_sources(
        self, store_factory: StoreFactory
    ) -> None:
        async with _on(store_factory, _keys("new")) as store:
            for sid in ("a", "b"):
                await store.create_session(sid, user_id="u1", metadata={"m": 1})
                await store.append_messages(sid, commit(user(PLAIN)))
            records = [
                (await _inner(store).snapshot(sid, _HEAD)).metadata["_helix"]["k"]
                for sid in ("a", "b")
            ]
            assert [r["i"] for r in records] == ["new", "new"]
            assert records[0]["w"] != records[1]["w"]
            await store.set_session_title("a", "titled")
            info = await store.get_session("a")
            assert info is not None and info.metadata == {"m": 1} and info.title == "titled"
            listed = (await store.list_all_sessions()).sessions
            assert [s.metadata for s in listed] == [{"m": 1}, {"m": 1}]
            exported = "\n".join(await _export(store, "a"))
            assert "titled" in exported and records[0]["w"] not in exported
            clone = await store.clone_session("a", "c")
            assert clone.metadata == {"m": 1}
            assert await store.get_messages("c") == [user(PLAIN)]
            await store.append_messages("c", commit(user("more")))
            assert await store.get_messages("c") == [user(PLAIN), user("more")]
            assert PLAIN not in await _stored(store, "c")
        async with (
            _on(store_factory, _keys("new")) as fresh,
            _on(store_factory, _keys("new")) as other,
        ):
            # An instance that never saw the clone opens it from its stored key record.
            assert await fresh.get_messages("c") == [user(PLAIN), user("more")]
            # A session deleted and created again elsewhere has a new key: read anew.
            assert await fresh.get_messages("a") == [user(PLAIN)]
            await other.delete_session("a")
            await other.create_session("a", user_id="u1")
            await other.append_messages("a", commit(user("again")))
            assert await fresh.get_messages("a") == [user("again")]

    @rule("ENC-4", requires="engine")
    async def test_ENC_4_a_missing_or_wrong_key_is_refused_never_garbage(
        self, store_factory: StoreFactory
    ) -> None:
        async with _on(store_factory, _keys("old")) as store:
            await store.create_session("s", user_id="u1")
            await store.append_messages("s", commit(user(PLAIN)))
            before = await snapshot(store, "s")
        wrong = LocalKeyring({"old": LocalKeyring.new_key()})
        for keys, key_id in ((_keys("new"), "old"), (wrong, "old"), (None, "old")):
            async with _on(store_factory, keys) as other:
                for call in _reads_and_a_write(other, "s"):
                    assert (await _refused_key(call, "s")).key_id == key_id
        async with _on(store_factory, _keys("old")) as store:
            assert await snapshot(store, "s") == before
            with pytest.raises(ValidationError):
                encrypt(store, _keys("old"))  # opened, and encrypted already
            with pytest.raises(ValidationError):
                await rotate_keys(store, batch_size=0)
        with pytest.raises(ValidationError):
            encrypt(_on(store_factory, None), object())  # type: ignore[arg-type]
        async with _on(store_factory, None) as plain:
            with pytest.raises(ValidationError):
                await rotate_keys(plain)

    @rule("ENC-5", requires="engine")
    async def test_ENC_5_rotation_rewraps_while_stores_serve(
        self, store_factory: StoreFactory
    ) -> None:
        async with _on(store_factory, _keys("old")) as store:
            for sid in ("s1", "s2", "s3"):
                await store.create_session(sid, user_id="u1")
                await store.append_messages(sid, commit(user(f"{sid} {PLAIN}")))
        both = _keys("old", "new")
        async with (
            _on(store_factory, both) as serving,
            _on(store_factory, both) as rotating,
        ):
            assert await serving.get_messages("s1") == [user(f"s1 {PLAIN}")]
            await serving.create_session("s4", user_id="u1")
            assert await _key_id(serving, "s4") == "new"
            assert await _key_id(serving, "s1") == "old"
            rewrapped: list[int] = []

            async def rotate() -> None:
                rewrapped.append(await rotate_keys(rotating, batch_size=1))

            # Writes go on while the rotation runs: none is lost, none fails.
            async with anyio.create_task_group() as group:
                group.start_soon(rotate)
                for n in range(6):
                    await serving.append_messages("s2", commit(user(f"w{n}")))
            assert rewrapped == [3]
            # The serving instance saw s1 under the old key: its writes keep the new one.
            await serving.append_messages("s1", commit(user("after")))
            await serving.update_session_metadata("s1", {"x": 1})
            assert [await _key_id(serving, s) for s in ("s1", "s2", "s3")] == ["new"] * 3
            assert await rotate_keys(rotating) == 0
        async with _on(store_factory, _keys("new")) as store:
            assert await store.get_messages("s1") == [user(f"s1 {PLAIN}"), user("after")]
            writes = [user(f"w{n}") for n in range(6)]
            assert await store.get_messages("s2") == [user(f"s2 {PLAIN}"), *writes]
            assert await store.get_messages("s3") == [user(f"s3 {PLAIN}")]

    @rule("ENC-6", requires="engine")
    async def test_ENC_6_plain_sessions_stay_plain_exports_cross_over(
        self, store_factory: StoreFactory
    ) -> None:
        async with _on(store_factory, None) as plain:
            await plain.create_session("p", user_id="u1")
            await plain.append_messages("p", commit(user(PLAIN)))
        async with _on(store_factory, _keys("new")) as store:
            await store.append_messages("p", commit(user("two")))
            assert PLAIN in await _stored(store, "p")
            assert await rotate_keys(store) == 0  # nothing to rewrap: "p" has no key
            await store.create_session("e", user_id="u1", metadata={"m": 1})
            await store.append_messages("e", commit(user(PLAIN)))
            lines = await _export(store, "e")
            await store.delete_session("e")
        async with _on(store_factory, None) as plain:
            assert await plain.get_messages("p") == [user(PLAIN), user("two")]
            await import_lines(plain, lambda: lines, "enc6")
            assert await plain.get_messages("e") == [user(PLAIN)]
            await plain.delete_session("e")
        async with _on(store_factory, _keys("new")) as store:
            await import_lines(store, lambda: lines, "enc6")
            assert await store.get_messages("e") == [user(PLAIN)]
            info = await store.get_session("e")
            assert info is not None and info.metadata == {"m": 1}
            assert PLAIN not in await _stored(store, "e")


def _reads_and_a_write(store: SessionStateStore, sid: str) -> list[Callable[[], Awaitable[object]]]:
    return [
        lambda: store.get_messages(sid),
        lambda: store.get_session(sid),
        lambda: store.append_messages(sid, commit(user("x"))),
    ]


async def _export(store: SessionStateStore, sid: str) -> list[str]:
    return [line async for line in export_lines(store, [sid], whole_store=False)]
