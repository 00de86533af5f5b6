"""Where a rank stands in its job: which ranks share its host (and so its agent), its place among them and among the
hosts, and the job's key; agreed on by every rank through torch's store.

Store keys (under the group's store, so one per group):

==========================  ===================================================================================
``inagg/host/<rank>``       the host id of each rank (:attr:`._config.Config.host_id`)
``inagg/key``               the job key, drawn by rank 0: ``<run id>-<16 hex digits>``
``inagg/agent/<key>/...``   each host's agent's settings that every host must share, and whether each rank reached
                            its agent (:mod:`._agreement`)
==========================  ===================================================================================
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

import torch.distributed as dist


@dataclass(frozen=True)
class Topology:
    rank: int
    world_size: int
    #: This rank's index among the ranks on its host, in rank order.
    local_rank: int
    local_world_size: int
    #: This host's index among the job's hosts, in order of their lowest rank (its switch worker id).
    host_index: int
    hosts: int
    #: What names the job on every host's agent (and, hashed, its secret).
    job_key: str
    #: Whether the ranks are laid out by host: the same number on every host, consecutive ranks together, hosts in
    #: order (what torchrun does). Reduce-scatter and all-gather send each host only its parts only then.
    by_host: bool = True
    #: Each host's id (INAGG_HOST_ID or the host name), by host index.
    host_ids: tuple = ()
    #: Each rank's host index, by rank.
    host_of: tuple = ()

    def ranks_of(self, host_index: int) -> list:
        """The ranks on host ``host_index``, in order (the first is the host's first rank, local rank 0)."""
        return [r for r, h in enumerate(self.host_of) if h == host_index]

    @classmethod
    def exchange(cls, store: dist.Store, rank: int, size: int, host: str) -> "Topology":
        """Publishes this rank's host and reads every rank's (waits for all of them); rank 0 draws the job key from
        ``TORCHELASTIC_RUN_ID`` and a random part."""
        store.set(f"inagg/host/{rank}", host)
        hosts_of = [store.get(f"inagg/host/{r}").decode() for r in range(size)]
        hosts = list(dict.fromkeys(hosts_of))
        local = [r for r in range(size) if hosts_of[r] == host]
        if rank == 0:
            run = os.environ.get("TORCHELASTIC_RUN_ID", "pg")
            store.set("inagg/key", f"{run}-{uuid.uuid4().hex[:16]}")
        index = {h: i for i, h in enumerate(hosts)}
        per_host = size // len(hosts)
        by_host = size % len(hosts) == 0 and all(index[hosts_of[r]] == r // per_host for r in range(size))
        return cls(rank=rank, world_size=size, local_rank=local.index(rank), local_world_size=len(local),
                   host_index=hosts.index(host), hosts=len(hosts), job_key=store.get("inagg/key").decode(),
                   by_host=by_host, host_ids=tuple(hosts), host_of=tuple(index[h] for h in hosts_of))
