"""ENC-2 on the memory store (docs/encryption.md): its records hold no sealed text."""

from __future__ import annotations

import pytest

from helix_agents.contract.encryption_scan import (
    PLAIN,
    RETAIN,
    check_plain_records,
    write_plain_records,
)
from helix_agents.core.encryption import LocalKeyring, encrypt
from helix_agents.store_memory import MemoryData, MemoryStateStore

pytestmark = pytest.mark.anyio


async def test_encrypted_text_never_reaches_the_records() -> None:
    sealed, plain = MemoryData(), MemoryData()
    keys = LocalKeyring({"k": LocalKeyring.new_key()})
    async with encrypt(MemoryStateStore(sealed, max_messages=RETAIN), keys) as store:
        output_id = await write_plain_records(store, "s")
        await check_plain_records(store, "s", output_id)
    async with MemoryStateStore(plain, max_messages=RETAIN) as store:
        await write_plain_records(store, "s")
    assert PLAIN in repr(plain.sessions)  # the scan sees the text where it is
    assert PLAIN not in repr(sealed.sessions)
