"""``SessionStoreContract``: subclass it, provide ``store_factory``, and every rule runs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from helix_agents.core import SessionStateStore

from ._base import ContractBase, StoreFactory
from ._coverage import record_run
from .machine import run_state_machine
from .rules_arguments import ArgumentRules
from .rules_branches import BranchRules
from .rules_checkpoints import CheckpointPageRules
from .rules_commits import CommitRules
from .rules_context import ContextRules
from .rules_dump import DumpRules
from .rules_edits import EditRules
from .rules_encryption import EncryptionRules
from .rules_engine import EngineRules
from .rules_erasure import ErasureRules
from .rules_expiry import ExpiryRules
from .rules_fidelity import FidelityRules
from .rules_handles import HandleRules
from .rules_inputs import InputRules
from .rules_interplay import InterplayRules
from .rules_lifecycle import LifecycleRules
from .rules_listing import ListingRules
from .rules_messages import MessageRules
from .rules_paging import PagingRules
from .rules_queues import QueueRules
from .rules_records import RecordRules
from .rules_runs import RunRules
from .rules_scale import ScaleRules
from .rules_scoped import ScopedStateRules
from .rules_sessions import SessionRules
from .rules_usage import UsageRules

__all__ = ["SessionStoreContract"]


class SessionStoreContract(
    QueueRules,
    CommitRules,
    SessionRules,
    MessageRules,
    PagingRules,
    ListingRules,
    ScaleRules,
    InterplayRules,
    FidelityRules,
    EditRules,
    HandleRules,
    RunRules,
    RecordRules,
    ContextRules,
    InputRules,
    ArgumentRules,
    CheckpointPageRules,
    ScopedStateRules,
    EngineRules,
    DumpRules,
    LifecycleRules,
    EncryptionRules,
    BranchRules,
    ErasureRules,
    UsageRules,
    ExpiryRules,
    ContractBase,
):
    """The contract suite of docs/rules.md: one test per rule id, plus the state machine.

    Subclasses provide a ``store_factory`` fixture: a callable that takes store
    options (such as ``max_messages=5``) and returns a store, not yet entered,
    on fresh data for each test; calling it twice gives two independent
    instances on the same data.
    """

    _contract_root = True

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        """Provided by the subclass."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a store_factory fixture (see the contract docs)"
        )

    @pytest.fixture
    async def store(self, store_factory: StoreFactory) -> AsyncIterator[SessionStateStore]:
        """One open store on the test's fresh data."""
        async with store_factory() as store:
            yield store

    async def test_state_machine_matches_model(self, store_factory: StoreFactory) -> None:
        """Random sequences of operations leave the store where the pure model says.

        Most steps are built valid and must land; the steps tried and landed by
        kind are kept for the plugin's end-of-run summary.
        """
        # The machine runs its own event loop, so it gets a thread of its own.
        counts = await anyio.to_thread.run_sync(run_state_machine, store_factory)
        record_run(type(self).__name__, counts)
