"""The contract suite of helix-agents session stores.

Subclass :class:`SessionStoreContract` in your tests and give it a
``store_factory`` fixture; every rule of the specification runs against your
store as one test named by its rule id. The Hypothesis state machine is
:func:`run_state_machine`; the opt-in pytest plugin is
``helix_agents.contract.plugin``.
"""

from ._base import (
    REQUIRE_BACKENDS_ENV,
    Capabilities,
    StoreFactory,
    backend_unavailable,
    rule_tests,
)
from .machine import PROFILE_ENV, run_state_machine
from .suite import SessionStoreContract

RULE_IDS: tuple[str, ...] = tuple(
    sorted({rule_id for rule_id, _ in rule_tests(SessionStoreContract).values()})
)
"""Every rule id the suite checks."""

__all__ = [
    "PROFILE_ENV",
    "REQUIRE_BACKENDS_ENV",
    "RULE_IDS",
    "Capabilities",
    "SessionStoreContract",
    "StoreFactory",
    "backend_unavailable",
    "run_state_machine",
]
