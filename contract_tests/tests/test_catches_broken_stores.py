"""The contract catches broken stores: each wrong variant fails the rule test it breaks.

Every broken store wraps a correct memory store through the public API only
(see ``broken_stores`` and ``broken_subtle``); the same rule test passes on the correct store.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import Phase, settings

from helix_agents.contract import SessionStoreContract, run_state_machine
from helix_agents.contract._base import rule_tests
from helix_agents.core import StateStoreError
from helix_agents.store_memory import MemoryData, MemoryStateStore

from . import broken_stores as b
from . import broken_subtle as sub

pytestmark = pytest.mark.anyio

# (broken store, the rule test that must catch it); grouped by the classes of bugs.
BROKEN: list[tuple[type[b.Wrapper], str]] = [
    (b.RepeatOverwrites, "test_CI_1_insert_once_per_key"),
    (b.CountCheckedAfterWrite, "test_EMC_1_stale_expected_count_refused"),
    (b.CountCheckedAfterWrite, "test_EMC_2_check_is_atomic_with_write"),
    (b.TruncateKeepsDeliveries, "test_CI_6_truncate_and_rewind_reopen"),
    (b.TruncateKeepsDeliveries, "test_LA_6_truncate_and_rewind_reopen"),
    (b.TruncateKeepsDeliveries, "test_MSG_4_truncate_bounds_and_effects"),
    (b.TruncateKeepsDeliveries, "test_MSG_7_pop_bounds_and_effects"),
    (b.TruncateKeepsDeliveries, "test_MSG_8_replace_order_of_checks_and_effects"),
    (b.FenceIgnoredOnRecord, "test_CI_3_fenced_record_needs_live_run"),
    (b.CloneCopiesItems, "test_CI_9_clone_copies_no_item"),
    (b.ResolvesEveryTime, "test_APR_2_resolved_exactly_once"),
    (b.PopByReadThenTruncate, "test_MSG_9_pop_is_atomic_beside_writers"),
    (b.ReplaceCheckedThenWritten, "test_MSG_10_replace_is_atomic_beside_writers"),
    (b.PopNewestFirst, "test_MSG_7_pop_bounds_and_effects"),
    # paging
    (sub.DescCursorCountsFromNewest, "test_MSG_3_pages_are_exact_while_rows_are_appended"),
    (sub.PagesCappedAtTen, "test_MSG_3_every_page_size_walks_exactly"),
    (sub.ListingByUserPrefix, "test_SES_6_user_ids_that_prefix_each_other"),
    (sub.TiesByCreationOrder, "test_SES_6_ties_by_id_and_cursors_across_ties"),
    # aliasing
    (sub.HandsOutStoredObjects, "test_MSG_6_stored_rows_cannot_be_changed_by_callers"),
    (sub.SharesCheckpointObjects, "test_MSG_6_no_read_or_write_shares_a_mutable_object"),
    # scale
    (sub.ListsTenAtMost, "test_CI_5_a_dozen_items_many_delivered_by_one_commit"),
    # interplay
    (sub.ChecksOnlyFirstDelivery, "test_CI_5_a_dozen_items_many_delivered_by_one_commit"),
    (sub.TruncateResolvesApprovals, "test_APR_5_approvals_outlive_log_edits"),
    (sub.ClearKeepsCommitIds, "test_IDEM_2_commit_ids_after_a_clear_and_a_cut_inside_a_commit"),
    (sub.CutInsideKeepsCommitId, "test_IDEM_2_commit_ids_after_a_clear_and_a_cut_inside_a_commit"),
    (sub.CountCheckedBeforeFence, "test_CMT_1_two_faults_at_once_the_first_check_wins"),
    # error flags
    (sub.UnnamedMissingSession, "test_ERR_1_every_refusal_class_from_every_kind_of_call"),
    # round trip of every field
    (sub.DropsProviderOptions, "test_INP_1_every_optional_field_reads_back"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _factory(wrap: type[b.Wrapper] | None) -> Any:
    data = MemoryData()

    def factory(**options: Any) -> Any:
        store = MemoryStateStore(data, **options)
        return store if wrap is None else wrap(store)

    return factory


async def _run(wrap: type[b.Wrapper] | None, test_name: str) -> None:
    _, func = rule_tests(SessionStoreContract)[test_name]
    factory = _factory(wrap)
    suite = SessionStoreContract()
    if "store" in inspect.signature(func).parameters:
        async with factory() as store:
            await func(suite, store)
    else:
        await func(suite, factory)


@pytest.mark.parametrize(
    ("wrap", "test_name"),
    BROKEN,
    ids=[f"{w.__name__}-{rule_tests(SessionStoreContract)[t][0]}" for w, t in BROKEN],
)
async def test_broken_store_fails_its_rule(wrap: type[b.Wrapper], test_name: str) -> None:
    await _run(None, test_name)  # the rule holds for the correct store
    # A broken rule shows as a failed assert, a pytest.raises that did not raise,
    # or a refusal of another class than the rule's.
    with pytest.raises((AssertionError, pytest.fail.Exception, StateStoreError)):
        await _run(wrap, test_name)


# Finding the bug is the point here, not the smallest example of it: no shrinking.
settings.register_profile(
    "helix-find", settings.get_profile("helix-thorough"), phases=[Phase.generate]
)


@pytest.mark.parametrize("wrap", [b.TruncateKeepsDeliveries, b.PopNewestFirst])
def test_state_machine_catches_a_broken_store(wrap: type[b.Wrapper]) -> None:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - unpacked below
        run_state_machine(_factory(wrap), profile="helix-find")
    # Hypothesis reports each distinct failure it found (items and late answers).
    failures = getattr(caught.value, "exceptions", [caught.value])
    assert failures
    assert all(isinstance(f, AssertionError) for f in failures), failures
