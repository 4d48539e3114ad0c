"""ADK's artifact-service contract, restated from its docstrings (docs/integrations/adk.md).

ADK ships no tests in its sdist, so each test here runs the same assertions on ADK's own
``InMemoryArtifactService`` and ``FileArtifactService`` — passing there is what shows the
restatement is faithful — and on ``HelixArtifactService`` over each backend.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.artifacts import BaseArtifactService, FileArtifactService
from google.genai import types

pytestmark = pytest.mark.anyio

APP = "trips"
ADA: dict[str, Any] = {"app_name": APP, "user_id": "ada"}


def blob(data: bytes, mime_type: str = "application/pdf") -> types.Part:
    """A part holding ``data`` inline."""
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


async def test_versions_count_from_zero_load_back_and_carry_their_records(
    artifacts: BaseArtifactService,
) -> None:
    names: dict[str, Any] = {**ADA, "session_id": "s1"}
    assert await artifacts.load_artifact(**names, filename="doc") is None
    assert await artifacts.list_versions(**names, filename="doc") == []
    assert await artifacts.list_artifact_versions(**names, filename="doc") == []
    assert await artifacts.get_artifact_version(**names, filename="doc") is None
    parts = [blob(b"v0"), blob(b"v1", "image/png"), types.Part(text="v2")]
    for n, part in enumerate(parts):
        saved = await artifacts.save_artifact(**ADA, session_id="s1", filename="doc", artifact=part)
        assert saved == n
    for n, part in enumerate(parts):
        assert (
            await artifacts.load_artifact(**ADA, session_id="s1", filename="doc", version=n) == part
        )
    assert await artifacts.load_artifact(**ADA, session_id="s1", filename="doc") == parts[-1]
    assert await artifacts.list_versions(**ADA, session_id="s1", filename="doc") == [0, 1, 2]
    assert await artifacts.load_artifact(**names, filename="doc", version=3) is None
    assert await artifacts.get_artifact_version(**names, filename="doc", version=5) is None
    # Each version's record: its number, mime type, metadata and a URI of its own.
    names = {**names, "filename": "pic"}
    await artifacts.save_artifact(**names, artifact=blob(b"a", "image/png"))
    await artifacts.save_artifact(
        **names, artifact=blob(b"b", "image/jpeg"), custom_metadata={"by": "ada", "n": [1, 2]}
    )
    records = await artifacts.list_artifact_versions(**names)
    assert [r.version for r in records] == [0, 1]
    assert [r.mime_type for r in records] == ["image/png", "image/jpeg"]
    assert records[1].custom_metadata == {"by": "ada", "n": [1, 2]}
    assert records[0].canonical_uri and records[0].canonical_uri != records[1].canonical_uri
    latest = await artifacts.get_artifact_version(**names)
    assert latest is not None and latest.version == 1 and latest.mime_type == "image/jpeg"


async def test_session_scoped_artifacts_stay_in_their_session_user_ones_are_shared(
    artifacts: BaseArtifactService,
) -> None:
    await artifacts.save_artifact(**ADA, session_id="s1", filename="a.txt", artifact=blob(b"1"))
    await artifacts.save_artifact(
        **ADA, session_id="s1", filename="user:p.txt", artifact=blob(b"u")
    )
    await artifacts.save_artifact(**ADA, session_id="s2", filename="b.txt", artifact=blob(b"2"))
    assert await artifacts.list_artifact_keys(**ADA, session_id="s1") == ["a.txt", "user:p.txt"]
    assert await artifacts.list_artifact_keys(**ADA, session_id="s2") == ["b.txt", "user:p.txt"]
    assert await artifacts.load_artifact(**ADA, session_id="s2", filename="a.txt") is None
    # The user's artifact loads from any session, and from none.
    for session_id in ("s1", "s2", None):
        found = await artifacts.load_artifact(**ADA, session_id=session_id, filename="user:p.txt")
        assert found == blob(b"u")
    # Another user, another app: nothing.
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="bob", session_id="s1") == []
    assert await artifacts.list_artifact_keys(app_name="x", user_id="ada", session_id="s1") == []


async def test_a_session_scoped_name_needs_a_session(artifacts: BaseArtifactService) -> None:
    if isinstance(artifacts, FileArtifactService):
        pytest.skip("ADK's FileArtifactService saves a name without session_id user-scoped")
    with pytest.raises(ValueError, match=r"(?i)session"):
        await artifacts.save_artifact(**ADA, filename="a.txt", artifact=blob(b"1"))
    assert await artifacts.list_artifact_keys(**ADA) == []


async def test_delete_removes_every_version_and_a_new_save_starts_again(
    artifacts: BaseArtifactService,
) -> None:
    names: dict[str, Any] = {**ADA, "session_id": "s1"}
    for data in (b"1", b"2"):
        await artifacts.save_artifact(**names, filename="doc", artifact=blob(data))
    await artifacts.save_artifact(**names, filename="keep", artifact=blob(b"k"))
    await artifacts.delete_artifact(**names, filename="doc")
    assert await artifacts.load_artifact(**names, filename="doc") is None
    assert await artifacts.list_versions(**names, filename="doc") == []
    assert await artifacts.list_artifact_keys(**names) == ["keep"]
    await artifacts.delete_artifact(**names, filename="doc")  # already gone: nothing to do
    assert await artifacts.save_artifact(**names, filename="doc", artifact=blob(b"3")) == 0
    assert await artifacts.load_artifact(**names, filename="doc") == blob(b"3")


async def test_binary_bytes_odd_filenames_and_dicts_round_trip_exactly(
    artifacts: BaseArtifactService,
) -> None:
    every_byte = bytes(range(256)) * 4
    filenames = ["report v2 (final).pdf", "ünïcødé-📄.bin", "dir/inner.txt", "a..b", "user:ñ x"]
    for filename in filenames:
        await artifacts.save_artifact(
            **ADA,
            session_id="s1",
            filename=filename,
            artifact=blob(every_byte, "application/x-raw"),
        )
    for filename in filenames:
        part = await artifacts.load_artifact(**ADA, session_id="s1", filename=filename)
        assert part is not None and part.inline_data is not None
        assert part.inline_data.data == every_byte
        assert part.inline_data.mime_type == "application/x-raw"
    assert await artifacts.list_artifact_keys(**ADA, session_id="s1") == sorted(filenames)
    # A plain dict (camelCase, as JSON clients send it) is read as a Part.
    raw = {"inlineData": {"data": "aGVsbG8=", "mimeType": "text/csv"}}
    await artifacts.save_artifact(**ADA, session_id="s1", filename="t.csv", artifact=raw)
    loaded = await artifacts.load_artifact(**ADA, session_id="s1", filename="t.csv")
    assert loaded == blob(b"hello", "text/csv")


async def test_concurrent_saves_of_one_filename_get_distinct_versions(
    artifacts: BaseArtifactService,
) -> None:
    names: dict[str, Any] = {**ADA, "session_id": "s1", "filename": "log"}
    saves = [artifacts.save_artifact(**names, artifact=blob(bytes([n]))) for n in range(8)]
    versions = await asyncio.gather(*saves)
    assert sorted(versions) == list(range(8))
    loaded = [await artifacts.load_artifact(**names, version=v) for v in range(8)]
    # Each version holds the bytes of the save that got its number: none lost, none doubled.
    assert {p.inline_data.data for p in loaded if p and p.inline_data} == {
        bytes([n]) for n in range(8)
    }
    assert all(loaded[v] == blob(bytes([n])) for n, v in enumerate(versions))
