"""The inagg backend against gloo's answers, in separate rank processes over the session's agent. Scenarios that
need the same number of ranks share one launch (each reports on its own; see _ranks.py)."""

from __future__ import annotations

import pytest

from conftest import assert_ok, assert_reported, run_ranks


@pytest.fixture(scope="module")
def api_run(agent):
    return run_ranks("async,coalesced,collectives", 3, env={"INAGG_AGENT": str(agent.socket)})


@pytest.fixture(scope="module")
def training_run(agent):
    # Strict: DDP's broadcast, parameter-shape all-gather and buckets all run on the agent, none falls back.
    return run_ranks("ddp,hook", 2, env={"INAGG_AGENT": str(agent.socket), "INAGG_STRICT": "1"})


def assert_scenario(results, name: str) -> None:
    assert_reported(results, name, "scenario")


def test_async_work_futures_complete_with_the_result(api_run):
    assert_scenario(api_run, "async")


def test_coalesced_allreduce_of_mixed_dtypes_across_rounds(api_run):
    assert_scenario(api_run, "coalesced")


def test_other_collectives_and_fallbacks_go_through_gloo(api_run):
    assert_scenario(api_run, "collectives")
    assert_ok(api_run)


def test_ddp_trains_like_gloo(training_run):
    assert_scenario(training_run, "ddp")


def test_comm_hook_trains_like_gloo(training_run):
    assert_scenario(training_run, "hook")
    assert_ok(training_run)
