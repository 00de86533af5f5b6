"""What every host's agent of a job must agree on (inagg_torch._agreement), on an in-process store: the hosts' first
ranks publish their agents' settings, every rank compares them. The same check with real agents and a switch, where
it must answer before the job would stall: test_multihost.py."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
import torch.distributed as dist

from inagg_torch import _agreement, errors
from inagg_torch._topology import Topology


def topology(rank: int, hosts_of: list) -> Topology:
    """Rank ``rank`` of a job whose rank r is on host ``hosts_of[r]`` (host ids in order of their first rank)."""
    ids = list(dict.fromkeys(hosts_of))
    host = hosts_of[rank]
    local = [r for r, h in enumerate(hosts_of) if h == host]
    return Topology(rank=rank, world_size=len(hosts_of), local_rank=local.index(rank), local_world_size=len(local),
                    host_index=ids.index(host), hosts=len(ids), job_key="run-0123456789abcdef",
                    host_ids=tuple(ids), host_of=tuple(ids.index(h) for h in hosts_of))


def publish_all(store: dist.Store, hosts_of: list, settings_of_host) -> None:
    """Each host's first rank publishes ``settings_of_host(host index)``."""
    for rank in range(len(hosts_of)):
        t = topology(rank, hosts_of)
        _agreement.publish(store, t, settings_of_host(t.host_index))


def test_hosts_whose_agents_agree_pass_and_one_host_has_nothing_to_compare():
    store = dist.HashStore()
    hosts_of = ["a", "a", "b", "b"]
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(65536, 4096))
    for rank in range(4):
        _agreement.check(store, topology(rank, hosts_of), timeout=1)
    alone = dist.HashStore()
    _agreement.publish(alone, topology(0, ["a", "a"]), _agreement.settings_of(65536, 0))
    _agreement.check(alone, topology(1, ["a", "a"]), timeout=0.1)
    assert alone.num_keys() == 0, "one host published or counted something"


def test_a_different_network_chunk_size_is_refused_naming_the_option_both_values_and_the_hosts_ranks():
    store = dist.HashStore()
    hosts_of = ["node-a", "node-a", "node-b", "node-b"]
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(65536, (4096, 0)[h]))
    with pytest.raises(errors.AgentSettingsMismatchError) as caught:
        _agreement.check(store, topology(3, hosts_of), timeout=1)
    assert str(caught.value) == (
        "inagg: the agents of job run-0123456789abcdef's hosts differ in --network-chunk-bytes: 4096 on host 0 "
        "'node-a' (ranks 0-1); 0 on host 1 'node-b' (ranks 2-3). Every host's agent needs the same "
        "--network-chunk-bytes (each host's network chunks must match the others' packet for packet at the switch; "
        "otherwise the job stalls there until the agents' peer timeout): start them with one value")
    assert isinstance(caught.value, errors.AgentMismatchError)


def test_a_different_slot_is_refused_and_many_hosts_are_named_by_value_a_few_each():
    store = dist.HashStore()
    hosts_of = [f"h{r // 2}" for r in range(2 * 9)] + ["h0"]  # host 0 also has the last rank
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(131072 if h == 7 else 65536, 0))
    with pytest.raises(errors.AgentSettingsMismatchError) as caught:
        _agreement.check(store, topology(5, hosts_of), timeout=1)
    message = str(caught.value)
    assert "differ in --slot-bytes: 65536 on hosts 0 'h0' (ranks 0-1, 18), 1 'h1' (ranks 2-3), 2 'h2' (ranks 4-5) " \
           "and 5 more; 131072 on host 7 'h7' (ranks 14-15). " in message, message
    assert "the ranks cut tensors into rounds of one slot" in message


def test_a_host_whose_first_rank_has_no_agent_is_named_at_once_and_a_host_that_never_says_within_the_timeout():
    store = dist.HashStore()
    hosts_of = ["a", "a", "b", "b"]
    _agreement.publish(store, topology(0, hosts_of), _agreement.settings_of(65536, 0))
    _agreement.failed(store, topology(2, hosts_of), errors.AgentUnavailableError("no agent on /x.sock"))
    with pytest.raises(errors.AgentUnavailableError, match=r"host 1 'b' \(ranks 2-3\) has no agent for job "
                                                           r"run-0123456789abcdef: AgentUnavailableError: no agent"):
        _agreement.check(store, topology(1, hosts_of), timeout=1)
    silent = dist.HashStore()
    for rank in (0, 1):
        _agreement.publish(silent, topology(rank, hosts_of), _agreement.settings_of(65536, 0))
    started = time.monotonic()
    with pytest.raises(errors.AgentUnavailableError, match=r"rank 1: host 1 'b' \(ranks 2-3\) did not say what "
                                                           r"their agents' --slot-bytes and --network-chunk-bytes "
                                                           r"are within 0.3 s"):
        _agreement.check(silent, topology(1, hosts_of), timeout=0.3)
    assert time.monotonic() - started < 5


def test_a_rank_other_than_its_hosts_first_without_an_agent_is_named_on_every_rank_at_once():
    store = dist.HashStore()
    hosts_of = ["a", "a", "b", "b"]
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(65536, 0))
    store.delete_key("inagg/agent/run-0123456789abcdef/rank/3")  # rank 3 found no agent instead
    _agreement.failed(store, topology(3, hosts_of), errors.AgentUnavailableError("no agent on /y.sock"))
    for rank in (1, 2, 0):  # rank 0 last: it raises only once every rank is through (it may hold the store)
        started = time.monotonic()
        with pytest.raises(errors.AgentUnavailableError, match=r"rank 3 on host 1 'b' \(ranks 2-3\) has no agent "
                                                               r"for job run-0123456789abcdef: .*no agent on /y.sock"):
            _agreement.check(store, topology(rank, hosts_of), timeout=30)
        assert time.monotonic() - started < 5, "waited for the timeout instead of naming the rank at once"


def test_a_group_made_again_does_not_read_the_last_groups_settings():
    store = dist.HashStore()
    hosts_of = ["a", "b"]
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(65536, 0))
    again = [dataclasses.replace(topology(r, hosts_of), job_key="run-fedcba9876543210") for r in range(2)]
    _agreement.publish(store, again[1], _agreement.settings_of(65536, 0))
    with pytest.raises(errors.AgentUnavailableError, match=r"rank 1: host 0 'a' \(rank 0\) did not say"):
        _agreement.check(store, again[1], timeout=0.3)


def test_rank_0_raises_only_once_every_rank_read_the_settings_since_it_may_hold_the_store():
    store = dist.HashStore()
    hosts_of = ["a", "b"]
    publish_all(store, hosts_of, lambda h: _agreement.settings_of(65536, h * 4096))
    raised = []

    def rank0() -> None:
        try:
            _agreement.check(store, topology(0, hosts_of), timeout=1)
        except errors.AgentSettingsMismatchError:
            raised.append(time.monotonic())

    thread = threading.Thread(target=rank0)
    thread.start()
    time.sleep(0.5)
    assert not raised, "rank 0 raised before rank 1 read the settings"
    read = time.monotonic()
    with pytest.raises(errors.AgentSettingsMismatchError):
        _agreement.check(store, topology(1, hosts_of), timeout=1)
    thread.join(10)
    assert raised and raised[0] >= read
