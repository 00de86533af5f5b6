"""The parts a process group is made of, each on its own and in this process (no agent): its settings
(:mod:`inagg_torch._config`), its place among the ranks (:mod:`inagg_torch._topology`) and its executor
(:mod:`inagg_torch._executor`)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import torch.distributed as dist

from inagg_torch._config import AGENT_GRACE_SECONDS, Config
from inagg_torch._executor import SerialExecutor
from inagg_torch._topology import Topology

ENV = ("INAGG_TIMEOUT", "INAGG_COLLECTIVE_TIMEOUT", "INAGG_SWITCH_JOB", "INAGG_HOST_ID")


@pytest.fixture()
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_config_defaults_follow_the_group_timeout(clean_env):
    c = Config.from_env(timedelta(seconds=90))
    assert (c.collective_timeout, c.gloo_timeout, c.agent_wait, c.switch_job) == (90, 90, 90 + AGENT_GRACE_SECONDS, 1)
    assert c.host_id  # the host name
    assert Config.from_env(None).collective_timeout == 1800  # torch's default group timeout


def test_config_reads_the_environment(clean_env):
    clean_env.setenv("INAGG_COLLECTIVE_TIMEOUT", "5")
    clean_env.setenv("INAGG_SWITCH_JOB", "7")
    clean_env.setenv("INAGG_HOST_ID", "host-a")
    c = Config.from_env(timedelta(seconds=90))
    assert (c.collective_timeout, c.gloo_timeout, c.agent_wait) == (5, 90, 5 + AGENT_GRACE_SECONDS)
    assert (c.switch_job, c.host_id) == (7, "host-a")
    clean_env.setenv("INAGG_TIMEOUT", "12.5")  # bounds gloo and the wait for the agent alike
    c = Config.from_env(timedelta(seconds=90))
    assert (c.collective_timeout, c.gloo_timeout, c.agent_wait) == (5, 12.5, 12.5)


@pytest.mark.parametrize("variable", ["INAGG_TIMEOUT", "INAGG_COLLECTIVE_TIMEOUT"])
@pytest.mark.parametrize("text", ["0", "-3", "soon", "nan"])
def test_config_refuses_what_is_not_a_positive_number_of_seconds_naming_the_variable(clean_env, variable, text):
    clean_env.setenv(variable, text)
    with pytest.raises(ValueError, match=f"inagg: {variable}='{text}' is not a positive number of seconds"):
        Config.from_env(timedelta(seconds=90))


def test_topology_places_ranks_by_host_in_rank_order(monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "run-9")
    store = dist.HashStore()
    hosts = ["b", "a", "b", "c", "a"]
    found = [None] * len(hosts)

    def join(rank: int) -> None:
        found[rank] = Topology.exchange(store, rank, len(hosts), hosts[rank])

    threads = [threading.Thread(target=join, args=(r,)) for r in range(len(hosts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [(t.local_rank, t.local_world_size, t.host_index, t.hosts) for t in found] == [
        (0, 2, 0, 3), (0, 2, 1, 3), (1, 2, 0, 3), (0, 1, 2, 3), (1, 2, 1, 3)]
    assert len({t.job_key for t in found}) == 1 and found[0].job_key.startswith("run-9-")
    assert len(found[0].job_key) == len("run-9-") + 16


def test_executor_runs_in_submission_order_and_a_wait_runs_only_the_next_one_inline():
    ex = SerialExecutor("test-executor")
    try:
        ran = []
        gate = threading.Event()
        first = ex.submit(lambda: (gate.wait(10), ran.append(("first", threading.current_thread().name))), "a",
                          inline=False)
        second = ex.submit(lambda: ran.append(("second", threading.current_thread().name)), "b")
        # The second may not overtake the first: its wait does not run it here while the first is held.
        waiter = threading.Thread(target=second.wait, name="waiter")
        waiter.start()
        waiter.join(0.2)
        assert ran == [] and not second.is_completed()
        gate.set()
        waiter.join(10)
        assert first.wait() and second.wait()
        assert [name for name, _ in ran] == ["first", "second"]
        assert ran[0][1] == "test-executor"
        assert first.result() == "a" and second.result() == "b"
        # Nothing before it: a synchronous call runs on the waiting thread (or the group's, if it got there first).
        inline = ex.submit(lambda: ran.append(("third", threading.current_thread().name)), None)
        inline.wait()
        assert ran[-1][1] in (threading.current_thread().name, "test-executor")
    finally:
        ex.shutdown(timeout=10)


def test_executor_hands_the_error_to_the_waiter_and_goes_on():
    ex = SerialExecutor("test-executor")
    try:
        def fail() -> None:
            raise RuntimeError("boom")

        bad = ex.submit(fail, None)
        with pytest.raises(RuntimeError, match="boom"):
            bad.wait()
        assert bad.is_completed() and not bad.is_success() and "boom" in str(bad.exception())
        good = ex.submit(lambda: None, 42)
        assert good.wait() and good.is_success() and good.result() == 42
    finally:
        ex.shutdown(timeout=10)
