"""What every host's agent of a job must agree on, compared across the hosts when the process group is made.

The hosts of a job cut its tensors into the switch's packets each on its own; where two cut differently their packets
do not match at the switch, which waits for the missing ones until the agents' peer timeout and then fails the job
("another worker of the job stopped contributing"). Two of an agent's settings decide the cut, and the agent tells its
ranks both (the hello's reply, the job file's header):

=========================  ====================================================================================
``--slot-bytes``           the most one round carries: the ranks cut a tensor into rounds of a slot each
``--network-chunk-bytes``  the chunks a sum's round goes through the switch in (0: the round whole)
=========================  ====================================================================================

The others may differ between hosts: ``--chunk-bytes`` only cuts a round's copies and sums within the host, and a
switch job of more lanes per packet than an agent's ``--max-lanes`` is refused by that agent when it joins the switch.

Each host's first rank publishes its agent's settings under ``inagg/agent/<job key>/<host index>`` in the group's
store (or why it has no agent), and every rank says under ``inagg/agent/<job key>/rank/<rank>`` whether it reached its
agent; every rank reads them all and raises :class:`~.errors.AgentSettingsMismatchError`, naming the setting, the
values and the hosts with their ranks, where the settings differ, or :class:`~.errors.AgentUnavailableError` naming
the rank that has no agent: the same error on every rank, before any tensor is sent. The job key is drawn anew for
every process group, so a group made again on a store that outlives the last one never reads the last one's keys.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import timedelta
from typing import Dict, List, Optional, Tuple

import torch.distributed as dist

from . import errors
from ._topology import Topology

#: (agent option, why every host needs the same value), in the order they are checked.
SHARED_SETTINGS: Tuple[Tuple[str, str], ...] = (
    ("--slot-bytes", "the ranks cut tensors into rounds of one slot, and each host's rounds must match the others' "
                     "at the switch"),
    ("--network-chunk-bytes", "each host's network chunks must match the others' packet for packet at the switch"),
)
#: Hosts named per value in the error.
SHOWN_HOSTS = 3
#: The most seconds one wait for the hosts' and ranks' keys lasts before each present key is read.
WAIT_SECONDS = 0.5
#: The most seconds rank 0 waits, before it raises, for the other ranks to read the settings.
LINGER_SECONDS = 30.0


def _key(topology: Topology, host_index: int) -> str:
    return f"inagg/agent/{topology.job_key}/{host_index}"


def _rank_key(topology: Topology, rank: int) -> str:
    return f"inagg/agent/{topology.job_key}/rank/{rank}"


def _through_key(topology: Topology) -> str:
    """How many ranks are through with the settings (read them, or have no agent)."""
    return f"inagg/agent/{topology.job_key}/through"


def settings_of(capacity: int, network_chunk_bytes: int) -> Dict[str, int]:
    """The settings of an agent that told its rank ``capacity`` (slot bytes) and ``network_chunk_bytes``."""
    return {"--slot-bytes": capacity, "--network-chunk-bytes": network_chunk_bytes}


def publish(store: dist.Store, topology: Topology, settings: Dict[str, int]) -> None:
    """On a host's first rank (local rank 0): its agent's ``settings``; on every rank: that it reached its agent."""
    if topology.hosts < 2:
        return
    if topology.local_rank == 0:
        store.set(_key(topology, topology.host_index), json.dumps({"settings": settings}))
    store.set(_rank_key(topology, topology.rank), json.dumps({"ok": True}))


def failed(store: dist.Store, topology: Topology, failure: BaseException) -> None:
    """This rank has no agent (``failure``, which it raises next): says so to every other rank (on a host's first rank
    also in place of its settings), which raise at once instead of waiting for it."""
    if topology.hosts < 2:
        return
    entry = json.dumps({"failed": f"{type(failure).__name__}: {failure}"})
    if topology.local_rank == 0:
        store.set(_key(topology, topology.host_index), entry)
    store.set(_rank_key(topology, topology.rank), entry)
    _through(store, topology, LINGER_SECONDS)


def check(store: dist.Store, topology: Topology, timeout: float) -> None:
    """Reads every host's agent settings (waiting up to ``timeout`` seconds for them) and raises where they differ;
    nothing to compare on one host."""
    if topology.hosts < 2:
        return
    problem = _problem(store, topology, timeout)
    _through(store, topology, LINGER_SECONDS if problem is not None else 0.0)
    if problem is not None:
        raise problem


def _through(store: dist.Store, topology: Topology, linger: float) -> None:
    """Counts this rank as through with the settings. Rank 0, before it raises, waits (up to ``linger`` seconds) for
    every rank to be: where rank 0 holds the store (``MASTER_ADDR``), the others could not read the settings, nor
    raise the error they name, once its process is gone."""
    count = store.add(_through_key(topology), 1)
    deadline = time.monotonic() + linger
    while topology.rank == 0 and count < topology.world_size and time.monotonic() < deadline:
        time.sleep(0.02)
        count = store.add(_through_key(topology), 0)


def _problem(store: dist.Store, topology: Topology, timeout: float) -> Optional[errors.InaggError]:
    """What is wrong with the hosts' agents' settings, None when nothing is: a rank that says it has no agent is named
    at once, without waiting for the others."""
    host_keys = [_key(topology, h) for h in range(topology.hosts)]
    rank_keys = [_rank_key(topology, r) for r in range(topology.world_size)]
    entries: Dict[str, dict] = {}
    deadline = time.monotonic() + timeout
    while True:
        missing = [k for k in host_keys + rank_keys if k not in entries]
        with contextlib.suppress(Exception):  # the store's own timeout error (DistStoreError, or RuntimeError)
            # one wait for every key still missing (what the store serves fastest); a look at each of them only
            # when they are not all there, at most every WAIT_SECONDS, to name a rank that has no agent at once
            store.wait(missing, timedelta(seconds=max(0.001, min(WAIT_SECONDS, deadline - time.monotonic()))))
        for key in missing:
            if store.check([key]):
                entries[key] = json.loads(store.get(key).decode())
                if "failed" in entries[key]:
                    return _no_agent(topology, key, host_keys, rank_keys, entries[key]["failed"])
        if len(entries) == len(host_keys) + len(rank_keys):
            break
        if time.monotonic() >= deadline:
            missing = sorted({h for h in range(topology.hosts) if host_keys[h] not in entries}
                             | {topology.host_of[r] for r in range(topology.world_size) if rank_keys[r] not in entries})
            return errors.AgentUnavailableError(
                f"inagg: rank {topology.rank}: {_hosts(topology, missing)} did not say what their agents' "
                f"{' and '.join(o for o, _ in SHARED_SETTINGS)} are within {timeout:g} s (their ranks did not "
                f"reach their agents?)")
    settings = [entries[k]["settings"] for k in host_keys]
    for option, why in SHARED_SETTINGS:
        by_value: Dict[int, List[int]] = {}
        for h, host_settings in enumerate(settings):
            by_value.setdefault(host_settings[option], []).append(h)
        if len(by_value) > 1:
            found = "; ".join(f"{value} on {_hosts(topology, hosts)}" for value, hosts in by_value.items())
            return errors.AgentSettingsMismatchError(
                f"inagg: the agents of job {topology.job_key}'s hosts differ in {option}: {found}. Every host's agent "
                f"needs the same {option} ({why}; otherwise the job stalls there until the agents' peer timeout): "
                f"start them with one value")
    return None


def _no_agent(topology: Topology, key: str, host_keys: List[str], rank_keys: List[str],
              why: str) -> errors.AgentUnavailableError:
    where = _host(topology, host_keys.index(key)) if key in host_keys \
        else f"rank {rank_keys.index(key)} on {_host(topology, topology.host_of[rank_keys.index(key)])}"
    return errors.AgentUnavailableError(f"inagg: rank {topology.rank}: {where} has no agent for job "
                                        f"{topology.job_key}: {why}")


def _hosts(topology: Topology, hosts: List[int]) -> str:
    shown = ", ".join(_host(topology, h, word=False) for h in hosts[:SHOWN_HOSTS])
    more = f" and {len(hosts) - SHOWN_HOSTS} more" if len(hosts) > SHOWN_HOSTS else ""
    return f"host{'s' if len(hosts) > 1 else ''} {shown}{more}"


def _host(topology: Topology, h: int, word: bool = True) -> str:
    """``host 1 'b' (ranks 2-3)``."""
    ranks = topology.ranks_of(h)
    return f"{'host ' if word else ''}{h} {topology.host_ids[h]!r} (rank{'s' if len(ranks) > 1 else ''} " \
           f"{_ranges(ranks)})"


def _ranges(ranks: List[int], shown: int = 4) -> str:
    """``0-3, 8-11``: runs of consecutive ranks, the first ``shown`` of them."""
    runs: List[List[int]] = []
    for r in ranks:
        if runs and runs[-1][1] == r - 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    text = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:shown])
    return text + (f" and {len(ranks) - sum(b - a + 1 for a, b in runs[:shown])} more" if len(runs) > shown else "")
