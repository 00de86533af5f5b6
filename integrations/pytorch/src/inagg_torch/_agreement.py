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

Each host's first rank publishes its agent's settings under ``inagg/agent/<host index>`` in the group's store (or why
it has no agent); every rank reads every host's and raises :class:`~.errors.AgentSettingsMismatchError`, naming the
setting, the values and the hosts with their ranks, where they differ: the same error on every rank, before any
tensor is sent.
"""

from __future__ import annotations

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
#: Store key: how many ranks are through with the settings (read them, or have no agent).
THROUGH = "inagg/agent/through"
#: The most seconds rank 0 waits, before it raises, for the other ranks to read the settings.
LINGER_SECONDS = 30.0


def _key(host_index: int) -> str:
    return f"inagg/agent/{host_index}"


def settings_of(capacity: int, network_chunk_bytes: int) -> Dict[str, int]:
    """The settings of an agent that told its rank ``capacity`` (slot bytes) and ``network_chunk_bytes``."""
    return {"--slot-bytes": capacity, "--network-chunk-bytes": network_chunk_bytes}


def publish(store: dist.Store, topology: Topology, settings: Dict[str, int]) -> None:
    """On a host's first rank (local rank 0): its agent's ``settings``."""
    if topology.local_rank == 0 and topology.hosts > 1:
        store.set(_key(topology.host_index), json.dumps({"settings": settings}))


def failed(store: dist.Store, topology: Topology, failure: BaseException) -> None:
    """This rank has no agent (``failure``, which it raises next): on a host's first rank, says so to the other hosts'
    ranks, which raise at once instead of waiting for its settings."""
    if topology.hosts < 2:
        return
    if topology.local_rank == 0:
        store.set(_key(topology.host_index), json.dumps({"failed": f"{type(failure).__name__}: {failure}"}))
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
    count = store.add(THROUGH, 1)
    deadline = time.monotonic() + linger
    while topology.rank == 0 and count < topology.world_size and time.monotonic() < deadline:
        time.sleep(0.02)
        count = store.add(THROUGH, 0)


def _problem(store: dist.Store, topology: Topology, timeout: float) -> Optional[errors.InaggError]:
    """What is wrong with the hosts' agents' settings, None when nothing is."""
    keys = [_key(h) for h in range(topology.hosts)]
    try:
        store.wait(keys, timedelta(seconds=timeout))
    except Exception as ex:  # noqa: BLE001 - the store's own timeout error (DistStoreError, or RuntimeError)
        missing = [h for h in range(topology.hosts) if not store.check([keys[h]])]
        return errors.AgentUnavailableError(
            f"inagg: rank {topology.rank}: {_hosts(topology, missing)} did not say what their agents' "
            f"{' and '.join(o for o, _ in SHARED_SETTINGS)} are within {timeout:.0f} s (their first rank did not "
            f"reach its agent?): {ex}")
    entries = [json.loads(store.get(k).decode()) for k in keys]
    for h, entry in enumerate(entries):
        if "failed" in entry:
            return errors.AgentUnavailableError(
                f"inagg: rank {topology.rank}: {_host(topology, h)} has no agent for job {topology.job_key}: "
                f"{entry['failed']}")
    for option, why in SHARED_SETTINGS:
        by_value: Dict[int, List[int]] = {}
        for h, entry in enumerate(entries):
            by_value.setdefault(entry["settings"][option], []).append(h)
        if len(by_value) > 1:
            found = "; ".join(f"{value} on {_hosts(topology, hosts)}" for value, hosts in by_value.items())
            return errors.AgentSettingsMismatchError(
                f"inagg: the agents of job {topology.job_key}'s hosts differ in {option}: {found}. Every host's agent "
                f"needs the same {option} ({why}; otherwise the job stalls there until the agents' peer timeout): "
                f"start them with one value")
    return None


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
