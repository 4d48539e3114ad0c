"""The key layout and the scripts' shape: one slot per session, KEYS by name, one writer."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest
from redis.crc import key_slot

from helix_agents.store_redis._keys import SESSION_KEYS, KeySpace
from helix_agents.store_redis._scripts import NAMES, source


def test_the_scripts_name_each_session_key_at_its_index() -> None:
    """apply.lua and read.lua get ``local META, ROWS, ... = KEYS[1], KEYS[2], ...``."""
    for name in ("apply", "read"):
        found = re.search(r"local (META.*) = (KEYS\[1\].*)\n", source(name))
        assert found is not None
        names, slots = found.groups()
        assert names.split(", ") == [k.upper() for k in SESSION_KEYS]
        assert slots.split(", ") == [f"KEYS[{i}]" for i in range(1, len(SESSION_KEYS) + 1)]
    assert source("read").startswith("#!lua flags=no-writes\n")


@pytest.mark.parametrize("session_id", ["s1", "a{b}c", "{}", "%7B", "ü/ä:{x"])
def test_every_key_of_a_session_is_in_one_slot_and_names_it_alone(session_id: str) -> None:
    space = KeySpace.build("helix", "ns")
    keys = space.session(session_id)
    assert len({key_slot(k.encode()) for k in keys}) == 1
    assert keys[0] == space.meta(session_id)
    others = space.session(session_id + "x")
    assert not set(keys) & set(others)


def test_there_is_one_writer_and_one_reader() -> None:
    """Besides scoped state's journal steps (docs/scoped-state.md), no per-method script."""
    shipped = {p.name for p in files("helix_agents.store_redis").joinpath("lua").iterdir()}
    assert shipped == {f"{name}.lua" for name in NAMES} | {"_snapshot.lua"}
