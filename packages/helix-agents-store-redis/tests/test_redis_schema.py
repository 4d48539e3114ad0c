"""One schema for what the client and the scripts exchange: KEYS, ARGV slots, replies."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest
from redis.asyncio import Redis

from helix_agents.core.refusals import REFUSALS
from helix_agents.store_redis._keys import SESSION_KEYS
from helix_agents.store_redis._schema import (
    COMMIT,
    COMMIT_REPLY,
    COMMON,
    check_script,
    joined_reply,
    lua_prelude,
)
from helix_agents.store_redis._scripts import WRITES, source
from helix_agents.store_redis._wire import Wire


def test_every_write_script_gets_the_keys_and_slots_by_name() -> None:
    """The prelude names each session key at its KEYS index and each COMMIT slot at its ARGV."""
    prelude = lua_prelude("commit")
    names, slots = re.search(r"local (META.*) = (KEYS\[1\].*)\n", prelude).groups()  # type: ignore[union-attr]
    assert names.split(", ") == [k.upper() for k in SESSION_KEYS]
    assert slots.split(", ") == [f"KEYS[{i}]" for i in range(1, len(SESSION_KEYS) + 1)]
    assert "local has_cid, starting, rewind" in prelude
    assert f"tonumber(ARGV[{COMMIT.first + 2}])" in prelude  # rewind, an int
    assert f"local REST = {COMMON.rest + len(COMMIT.slots)}" in prelude
    for name in WRITES:
        assert lua_prelude(name) in source(name)


def test_a_script_reading_a_named_slot_by_index_is_refused() -> None:
    """Reading ARGV[5] in the commit (a named slot) is refused when the script is composed."""
    with pytest.raises(RuntimeError, match="ARGV\\[5\\]"):
        check_script("commit", "local x = ARGV[5]")
    with pytest.raises(RuntimeError, match="ARGV\\[2\\]"):
        check_script("finish", "local now = ARGV[2]")
    check_script("commit", "local row = ARGV[REST + 1]")
    check_script("finish", "local run = ARGV[5]")


def test_arguments_are_packed_by_name_and_must_all_be_given() -> None:
    """pack() puts values in slot order, flags as 1/0, and refuses a missing or unknown name."""
    assert COMMON.pack(SID="s", NOW=7, TTL=0, INLINE=True) == ["s", 7, 0, 1]
    with pytest.raises(TypeError, match="INLINE"):
        COMMON.pack(SID="s", NOW=7, TTL=0)
    with pytest.raises(TypeError):
        COMMON.pack(SID="s", NOW=7, TTL=0, INLINE=True, EXTRA=1)


def test_a_reply_is_read_by_the_names_of_its_fields() -> None:
    """joined_reply() names each field of a ':'-joined reply; the last may hold ':'."""
    done = joined_reply(COMMIT_REPLY, "0:3:1:17:helix:user:{ada}")
    assert done == {
        "first_index": "0",
        "message_count": "3",
        "replayed": "1",
        "last_activity": "17",
        "user_key": "helix:user:{ada}",
    }
    with pytest.raises(RuntimeError):
        joined_reply(COMMIT_REPLY, "0:3:1")


def test_every_refusal_code_a_script_sends_is_in_cores_table() -> None:
    """The scripts refuse with the codes of core's REFUSALS, the same as the SQL functions."""
    sent: set[str] = set()
    for path in files("helix_agents.store_redis").joinpath("lua").iterdir():
        text = path.read_text(encoding="utf-8")
        sent |= set(re.findall(r"refuse(?:_commit)?\('(\w+)'", text))
        sent |= set(re.findall(r"return \{'(\w+)'", text))
    # Replies of a write that landed, or found nothing to do: not refusals. Nor are the
    # scoped-state journal's signals, which the client acts on and resends (never raised):
    # 'sealed' (announce again) and 'pending' (apply the journal before a delete); nor
    # append.lua's 'full' (run commit.lua instead).
    sent -= {"ok", "none", "noop", "already", "replayed", "sealed", "pending", "full"}
    assert sent and sent <= set(REFUSALS), sorted(sent - set(REFUSALS))


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_the_fast_path_sends_exactly_what_redis_py_would(encoding: str) -> None:
    """ASCII text and ints packed in one pass, anything else alone: the same bytes."""
    client = Redis(encoding=encoding)
    wire = Wire(client)
    conn = client.connection_pool.make_connection()  # type: ignore[no-untyped-call]  # redis-py
    sha = "0" * 40
    keys = ["helix:{s}:meta", "helix:{s}:rows"]
    for args in (
        ["ascii", 7, -3, ""],
        ["h\u00e9llo", 2.5, b"raw\x00bytes", "mid", 0, "\u00ff"],
        [],
    ):
        expected = b"".join(conn.pack_command("EVALSHA", sha, len(keys), *keys, *args))
        assert wire.pack(Wire.head(sha), keys, args) == expected
