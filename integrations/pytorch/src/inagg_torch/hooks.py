"""DDP communication hook: all-reduce DDP's gradient buckets through inagg while the model's process group stays
gloo or NCCL.

    ddp = DistributedDataParallel(model)                       # process group: gloo (or NCCL)
    inagg_group = dist.new_group(backend="inagg")               # the same ranks, through the inagg agent
    ddp.register_comm_hook(inagg_group, inagg_torch.hooks.allreduce_hook)
"""

from typing import Optional

import torch
import torch.distributed as dist

__all__ = ["allreduce_hook"]

# No `from __future__ import annotations` here: DDP checks the hook's annotations as objects.


def allreduce_hook(state: Optional[dist.ProcessGroup], bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Averages ``bucket``'s gradients over the ranks of ``state`` (an ``inagg`` process group; ``None``: the default
    group, which must then be ``inagg``). Returns the future DDP waits on, completed with the averaged buffer."""
    from .process_group import ProcessGroupInagg

    group = state if state is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(group, ProcessGroupInagg):
        raise TypeError(f"inagg_torch.hooks.allreduce_hook needs an inagg process group as its state (from "
                        f"dist.new_group(backend='inagg')), got {group!r}")
    buffer = bucket.buffer()
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.AVG
    work = group.allreduce([buffer], opts)
    return work.get_future().then(lambda fut: fut.value()[0])
