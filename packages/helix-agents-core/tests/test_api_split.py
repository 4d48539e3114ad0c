"""The user API (``helix_agents.core``) and the backend API (``.backend``) are apart."""

import helix_agents.core as core
import helix_agents.core.backend as backend


def test_backend_names_are_not_user_names() -> None:
    assert not set(core.__all__) & set(backend.__all__)


def test_backend_helpers_are_not_reachable_from_the_user_api() -> None:
    reachable = [name for name in backend.__all__ if hasattr(core, name)]
    assert reachable == []


def test_every_listed_name_resolves() -> None:
    for module in (core, backend):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_the_user_api_stays_small() -> None:
    # Users should not need a rule helper; a new user-facing name is a decision, not a drift.
    assert len(core.__all__) <= 35
    essentials = {"SessionStateStore", "open_store", "MessageCommit", "StateStoreError"}
    assert essentials <= set(core.__all__)
