"""Our artifact rules, ADKA-1..8 (docs/integrations/adk.md), on every backend.

What the service stored is read around it, through the store, by the names the docs
give (adk_around.name), so a test of the layout does not trust the adapter.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from adk_around import APP, name, sid_of
from google.genai import types
from helix_backends import BACKENDS, Stores

from helix_agents.adk import (
    MAX_ARTIFACT_BYTES,
    AdkValidationError,
    ArtifactTooLargeError,
    HelixArtifactService,
)
from helix_agents.core import MessageCommit, ScopedStateDelta, SessionStateStore
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.core.errors import ForeignSessionError

pytestmark = pytest.mark.anyio
on_every_backend = pytest.mark.parametrize("stores", BACKENDS, indirect=True)

LOG = name(APP, "ada", None, "artifacts")
S1: dict[str, Any] = {"app_name": APP, "user_id": "ada", "session_id": "s1"}


def part_owner(filename: str, version: int | str) -> str:
    """The owner of a ``user`` map of ada's artifact in session s1: a version's part, or
    its records (``version="versions"``)."""
    return json.dumps([APP, "ada", "s1", filename, version], separators=(",", ":"))


def blob(data: bytes, mime_type: str = "application/octet-stream") -> types.Part:
    """A part holding ``data`` inline."""
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


async def everything(store: SessionStateStore) -> tuple[object, ...]:
    """The log's row count, its index, the records and the first version's part map."""
    info = await store.get_session(LOG)
    index = await store.get_scoped_state("session", LOG) if info is not None else None
    records = await store.get_scoped_state("user", part_owner("doc", "versions"))
    part = await store.get_scoped_state("user", part_owner("doc", 0))
    return (info and info.message_count, index, records, part)


@on_every_backend
async def test_adka1_the_log_layout_and_refusals_leave_it_unchanged(
    store: SessionStateStore,
) -> None:
    service = HelixArtifactService(store)
    await service.save_artifact(**S1, filename="doc", artifact=blob(b"\x00\xff", "image/png"))
    info = await store.get_session(LOG)
    assert info is not None and info.metadata[ADAPTER_KEY] == "adk" and info.user_id is None
    assert await store.get_scoped_state("session", LOG) == {name("s1", "doc"): 1}
    records: dict[str, Any] = await store.get_scoped_state("user", part_owner("doc", "versions"))
    assert [r["mime_type"] for r in records["versions"]] == ["image/png"]
    before = await everything(store)
    assert before[3] == {
        "part": blob(b"\x00\xff", "image/png").model_dump(mode="json", exclude_none=True)
    }

    refused = [
        {"artifact": types.Part()},  # no kind
        {"artifact": blob(b"1"), "custom_metadata": {"score": math.nan}},
        {"artifact": blob(b"1"), "custom_metadata": {"at": object()}},
    ]
    for call in refused:
        with pytest.raises(AdkValidationError) as bad:
            await service.save_artifact(**S1, filename="doc", **call)  # type: ignore[arg-type]
        assert bad.value.code == "validation_error" and bad.value.session_id == LOG
    with pytest.raises(AdkValidationError):  # the part maps' ids would pass 512 bytes
        await service.save_artifact(**S1, filename="n" * 500, artifact=blob(b"1"))
    assert await everything(store) == before


@on_every_backend
async def test_adka2_saves_from_two_stores_at_once_get_every_version(stores: Stores) -> None:
    async with stores.store("main") as one, stores.store("main") as two:
        services = [HelixArtifactService(one), HelixArtifactService(two)]
        saves = [
            services[n % 2].save_artifact(**S1, filename="doc", artifact=blob(bytes([n])))
            for n in range(6)
        ]
        versions = await asyncio.gather(*saves)
        assert sorted(versions) == list(range(6))
        for n, version in enumerate(versions):
            loaded = await services[1].load_artifact(**S1, filename="doc", version=version)
            assert loaded == blob(bytes([n]))
        assert (await one.get_session(LOG)).message_count == 6  # type: ignore[union-attr]


@on_every_backend
async def test_adka7_references_and_rewinds_and_adka6_delete_nulls_the_bytes(
    store: SessionStateStore,
) -> None:
    service = HelixArtifactService(store)
    await service.save_artifact(**S1, filename="doc", artifact=blob(b"target"))
    uri = f"artifact://apps/{APP}/users/ada/sessions/s1/artifacts/doc/versions/0"
    ref = types.Part(file_data=types.FileData(file_uri=uri, mime_type="application/octet-stream"))
    await service.save_artifact(**S1, filename="link", artifact=ref)
    assert await service.load_artifact(**S1, filename="link") == blob(b"target")
    elsewhere = uri.replace("/users/ada/", "/users/bob/")
    with pytest.raises(AdkValidationError):
        await service.save_artifact(
            **S1, filename="link", artifact=types.Part(file_data=types.FileData(file_uri=elsewhere))
        )
    assert await service.list_versions(**S1, filename="link") == [0]
    await service.save_artifact(**S1, filename="doc", artifact=blob(b""))  # ADK's rewind marker
    assert await service.load_artifact(**S1, filename="doc") is None
    assert await service.load_artifact(**S1, filename="doc", version=0) == blob(b"target")
    # ADKA-6: a delete nulls the index entry and every version's bytes.
    await service.delete_artifact(**S1, filename="doc")
    for version in (0, 1):
        assert await store.get_scoped_state("user", part_owner("doc", version)) == {"part": None}
    assert (await store.get_scoped_state("session", LOG))[name("s1", "doc")] is None
    assert await store.get_scoped_state("user", part_owner("doc", "versions")) == {"versions": None}


@on_every_backend
async def test_adka8_another_adapters_session_is_refused_and_missing(
    store: SessionStateStore,
) -> None:
    service = HelixArtifactService(store)
    await store.create_session(sid_of("ada", "theirs"), metadata=mark("openai-agents"))
    theirs: dict[str, Any] = {**S1, "session_id": "theirs"}
    with pytest.raises(ForeignSessionError) as refused:
        await service.save_artifact(**theirs, filename="doc", artifact=blob(b"1"))
    assert refused.value.session_id == sid_of("ada", "theirs")
    with pytest.raises(AdkValidationError):  # ids past 512 bytes: refused before any write
        await service.save_artifact(**S1, filename="n" * 500, artifact=blob(b"1"))
    assert await store.get_session(LOG) is None  # nothing written, not even the log
    await service.save_artifact(**theirs, filename="user:shared", artifact=blob(b"u"))
    assert await service.list_artifact_keys(**theirs) == ["user:shared"]
    assert await service.load_artifact(**theirs, filename="doc") is None
    with pytest.raises(ForeignSessionError):
        await service.delete_artifact(**theirs, filename="doc")


@pytest.mark.parametrize("stores", ["memory"], indirect=True)
async def test_adka5_too_large_is_refused_before_the_store(store: SessionStateStore) -> None:
    # Refused before the first store call (so one backend shows it): the log is not made.
    service = HelixArtifactService(store)
    huge = blob(b"x" * (MAX_ARTIFACT_BYTES * 3 // 4 + 1))
    with pytest.raises(ArtifactTooLargeError) as too_large:
        await service.save_artifact(**S1, filename="doc", artifact=huge)
    err = too_large.value
    assert (err.code, err.session_id, err.filename) == ("adk_artifact_too_large", LOG, "doc")
    assert err.size > err.limit == MAX_ARTIFACT_BYTES
    assert await store.get_session(LOG) is None


@pytest.mark.parametrize("stores", ["memory", "sqlite"], indirect=True)
async def test_adka6_an_artifact_of_600_versions_is_deleted_in_several_commits(
    store: SessionStateStore,
) -> None:
    service = HelixArtifactService(store)
    await service.save_artifact(**S1, filename="doc", artifact=blob(b"0"))
    # 599 more versions written around the service (600 saves would take seconds).
    stored: dict[str, Any] = await store.get_scoped_state("user", part_owner("doc", "versions"))
    [record] = stored["versions"]
    records = [{**record, "version": v} for v in range(600)]
    parts = [
        ScopedStateDelta(scope="user", owner=part_owner("doc", v), changes={"part": {"text": "x"}})
        for v in range(1, 600)
    ]
    entry = (
        ScopedStateDelta(scope="session", changes={name("s1", "doc"): 600}),
        ScopedStateDelta(
            scope="user", owner=part_owner("doc", "versions"), changes={"versions": records}
        ),
    )
    await store.append_messages(LOG, MessageCommit(scoped_state=(*entry, *parts[:400])))
    await store.append_messages(LOG, MessageCommit(scoped_state=tuple(parts[400:])))
    assert await service.list_versions(**S1, filename="doc") == list(range(600))
    await service.delete_artifact(**S1, filename="doc")
    for version in (0, 1, 497, 498, 599):
        assert await store.get_scoped_state("user", part_owner("doc", version)) == {"part": None}
    assert await service.list_artifact_keys(**S1) == []
    assert await service.save_artifact(**S1, filename="doc", artifact=blob(b"new")) == 0
