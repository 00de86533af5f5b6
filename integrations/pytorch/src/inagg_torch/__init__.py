"""inagg for PyTorch: ``import inagg_torch`` registers the torch.distributed backend ``"inagg"``.

    import torch.distributed as dist
    import inagg_torch  # noqa: F401
    dist.init_process_group("inagg")          # under torchrun: rank, world size, store from the environment
    dist.all_reduce(tensor)                   # through the host's inagg agent (shared memory), the switch across hosts

All-reduce and reduce-scatter (SUM, AVG of float32, float16, bfloat16, int32), all-gather, broadcast and barrier run
on the agent; the rest runs on a gloo group made from the same store, logged once per collective, or raises under
``INAGG_STRICT=1``. See docs/pytorch.md.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from . import errors, hooks
from .errors import (AgentMismatchError, AgentProtocolError, AgentSettingsMismatchError, AgentUnavailableError,
                     BadInputError, InaggError, NonFiniteError, RankFailedError, SharedMemoryFullError,
                     SwitchStageError, TensorMismatchError, UnsupportedError, UntrustedAgentError, WaitTimeoutError,
                     WorldMismatchError)
from .process_group import ProcessGroupInagg, create

__all__ = [
    "BACKEND",
    "ProcessGroupInagg",
    "register",
    "hooks",
    "errors",
    "InaggError",
    "AgentUnavailableError",
    "UntrustedAgentError",
    "AgentMismatchError",
    "AgentSettingsMismatchError",
    "WorldMismatchError",
    "TensorMismatchError",
    "NonFiniteError",
    "SharedMemoryFullError",
    "RankFailedError",
    "SwitchStageError",
    "AgentProtocolError",
    "UnsupportedError",
    "BadInputError",
    "WaitTimeoutError",
]

BACKEND = "inagg"


def register() -> None:
    """Registers the ``inagg`` backend with torch.distributed (done on import; idempotent)."""
    if BACKEND.upper() in dist.Backend.backend_list or BACKEND in dist.Backend.backend_list:
        return
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    dist.Backend.register_backend(BACKEND, create, devices=devices)


register()
