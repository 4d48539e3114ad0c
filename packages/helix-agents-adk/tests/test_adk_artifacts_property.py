"""ADKA-4, -5 and -8 as a property: any artifact is exact or refused, the store unchanged.

Hostile filenames (contract_tests' ids), every byte value, odd text and mime types, and
custom metadata from the hostile JSON strategy (plus values JSON turns into something
else) are saved; either the part and its metadata load back equal, or the save raises
``AdkValidationError`` and the store is as it was. Which of the two is predicted from
docs/limits.md (``json_ok``, ``id_ok``), so a service that refuses too much fails too.
Memory and SQLite only: what is checked happens before the store is called.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC
from typing import Any

import pytest
from adk_around import APP
from google.genai import types
from helix_backends import Stores
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from helix_agents.adk import AdkValidationError, HelixArtifactService
from helix_agents.contract._hostile import (
    ODD_TEXT,
    hostile_ids,
    hostile_json,
    id_ok,
    json_ok,
    same_json,
)
from helix_agents.core import SessionStateStore

PROFILE = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
METADATA = st.one_of(
    hostile_json,
    st.tuples(st.integers(), st.text(max_size=2)),
    st.datetimes(timezones=st.just(UTC)),
    st.binary(max_size=3),
)
TEXTS = st.one_of(st.sampled_from(ODD_TEXT), st.text(st.characters(exclude_categories=())))


def _name(*parts: object) -> str:
    return json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))


def predicted(filename: str, part: types.Part, metadata: Any) -> bool:
    """Whether the save lands, from the limits: its names are ids, its values storable JSON."""
    scope = None if filename.startswith("user:") else "s1"
    names_ok = id_ok(_name(scope, filename)) and id_ok(_name(APP, "ada", scope, filename, 10**18))
    stored = {"part": {"text": part.text} if part.text is not None else {"mime": _mime(part)}}
    return names_ok and json_ok(stored) and json_ok({"versions": [{"m": {"v": metadata}}]})


def _mime(part: types.Part) -> str | None:
    return part.inline_data.mime_type if part.inline_data is not None else None


async def everything(store: SessionStateStore) -> object:
    """The user's artifact log: its row count and index (``None`` before the first save)."""
    log = _name(APP, "ada", None, "artifacts")
    info = await store.get_session(log)
    if info is None:
        return None
    return info.message_count, await store.get_scoped_state("session", log)


async def exact_or_refused(
    service: HelixArtifactService,
    store: SessionStateStore,
    filename: str,
    part: types.Part,
    metadata: Any,
) -> None:
    names = {"app_name": APP, "user_id": "ada", "session_id": "s1", "filename": filename}
    before = await everything(store)
    try:
        version = await service.save_artifact(
            **names, artifact=part, custom_metadata={"v": metadata}
        )
    except AdkValidationError as exc:
        refused: AdkValidationError | None = exc
    else:
        refused = None
    event(f"{'refused' if refused else 'stored'}")
    note(f"refused: {refused}")
    assert (refused is None) == predicted(filename, part, metadata), refused
    if refused is not None:
        assert await everything(store) == before
        return
    assert await service.load_artifact(**names, version=version) == part
    record = await service.get_artifact_version(**names, version=version)
    assert record is not None and same_json(record.custom_metadata, {"v": metadata})


@pytest.mark.parametrize("stores", ["memory", "sqlite"], indirect=True)
def test_adka4_any_artifact_is_exact_or_refused(stores: Stores) -> None:
    with asyncio.Runner() as runner:
        store = stores.store("main")
        runner.run(store.__aenter__())
        try:
            service = HelixArtifactService(store)

            @PROFILE
            @given(hostile_ids, st.binary(max_size=64), TEXTS, st.booleans(), METADATA)
            def prop(filename: str, data: bytes, text: str, as_text: bool, metadata: Any) -> None:
                blob = types.Blob(data=data, mime_type=text)
                part = types.Part(text=text) if as_text else types.Part(inline_data=blob)
                runner.run(exact_or_refused(service, store, filename, part, metadata))

            prop()
        finally:
            runner.run(store.__aexit__(None, None, None))
