"""The shared server finder: its order, and the reason it gives when nothing is found.

No Docker engine runs here, so the container step is tested for its decision only
(no engine answers: not tried); the other places are real — env URLs, ports on which
nothing listens, directories without binaries, the local servers when they run.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from helix_agents.contract import REQUIRE_BACKENDS_ENV
from helix_agents.contract.servers import (
    POSTGRES_ENV,
    REDIS_CLUSTER_ENV,
    REDIS_ENV,
    Outcome,
    RedisServers,
    Step,
    answers,
    docker_answers,
    find_postgres,
    find_redis,
    find_redis_cluster,
    free_port,
    redis_answers,
    require,
    search,
)


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """No env URL, a Docker host where no engine listens; an empty directory as PATH."""
    for name in (POSTGRES_ENV, REDIS_ENV, REDIS_CLUSTER_ENV, REQUIRE_BACKENDS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'docker.sock'}")
    empty = tmp_path / "bin"
    empty.mkdir()
    return str(empty)


def test_no_postgres_anywhere_names_each_place_tried(nowhere: str, tmp_path: Path) -> None:
    port = free_port()
    with ExitStack() as stack:
        found = find_postgres(
            stack, local_urls=(f"postgresql://127.0.0.1:{port}/postgres",), path=nowhere
        )
    assert found.url is None and found.found_at is None
    assert [a.place for a in found.attempts] == [
        "$HELIX_POSTGRES_URL",
        f"local server (127.0.0.1:{port})",
        "local binaries",
        "Docker",
    ]
    assert found.reason == (
        "no PostgreSQL server ($HELIX_POSTGRES_URL: not set; "
        f"local server (127.0.0.1:{port}): nothing answers; "
        f"local binaries: no initdb on {nowhere} (Debian: apt install postgresql); "
        f"Docker: no engine answers at unix://{tmp_path / 'docker.sock'})"
    )


def test_no_redis_anywhere_names_each_place_tried(nowhere: str, tmp_path: Path) -> None:
    port = free_port()
    with ExitStack() as stack:
        servers = RedisServers(tmp_path)
        found = find_redis(
            stack, servers, local_urls=(f"redis://127.0.0.1:{port}/0",), path=nowhere
        )
        cluster = find_redis_cluster(stack, servers, path=nowhere)
    assert found.url is None and not servers.procs
    assert "$HELIX_REDIS_URL: not set" in found.reason
    assert f"local server (127.0.0.1:{port}): nothing answers" in found.reason
    assert f"local binaries: no redis-server on {nowhere}" in found.reason
    assert f"Docker: no engine answers at unix://{tmp_path / 'docker.sock'}" in found.reason
    assert cluster.reason == (
        "no Redis Cluster server ($HELIX_REDIS_CLUSTER_URL: not set; "
        f"local binaries: no redis-server or redis-cli on {nowhere} (Debian: redis-server))"
    )


def test_a_missing_server_skips_or_fails_under_require_backends(
    nowhere: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ExitStack() as stack:
        found = find_postgres(stack, local_urls=(), path=nowhere, docker=False)
    with pytest.raises(pytest.skip.Exception, match="local binaries: no initdb"):
        require(found)
    monkeypatch.setenv(REQUIRE_BACKENDS_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_BACKENDS_ENV} is set"):
        require(found)


def test_an_env_url_that_does_not_answer_is_the_only_place_tried(
    nowhere: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POSTGRES_ENV, f"postgresql://app:s3cret@127.0.0.1:{free_port()}/x")
    with ExitStack() as stack:
        found = find_postgres(stack, path=nowhere)
    assert [a.place for a in found.attempts] == ["$HELIX_POSTGRES_URL"]
    assert "does not answer" in found.reason and "s3cret" not in found.reason


def test_search_stops_at_the_first_place_with_a_server() -> None:
    tried: list[str] = []

    def step(name: str, url: str | None) -> tuple[str, Step]:
        def run(stack: ExitStack) -> Outcome:
            tried.append(name)
            return Outcome(url, "none here")

        return name, run

    with ExitStack() as stack:
        found = search("X", [step("a", None), step("b", "x://b"), step("c", "x://c")], stack)
    assert (found.url, found.found_at, tried) == ("x://b", "b", ["a", "b"])


def test_docker_answers_nothing_where_no_engine_listens(tmp_path: Path) -> None:
    assert not docker_answers(f"unix://{tmp_path / 'none.sock'}")
    assert not docker_answers(f"tcp://127.0.0.1:{free_port()}")
    assert not docker_answers("ssh://somewhere")


def test_the_local_default_ports_come_before_binaries(nowhere: str) -> None:
    """Where the local servers run (as in this repository's CI), they are found first."""
    with ExitStack() as stack:
        pg = find_postgres(stack, path=nowhere, docker=False)
        rd = find_redis(stack, RedisServers(Path(nowhere)), path=nowhere, docker=False)
    for found, answer in ((pg, answers), (rd, redis_answers)):
        if found.url is None:
            pytest.skip(f"no local server on the default port: {found.reason}")
        assert found.found_at is not None and found.found_at.startswith("local server")
        assert answer(found.url)
