"""The collectives that move bytes (all-gather, broadcast, barrier) as GATHER rounds of the agent: each rank gives
the bytes it owns at their place in the collective's output, the agent copies every rank's bytes into the round's
result (over several hosts the switch adds the hosts' results as int32, each host's bytes and zeros elsewhere: exact,
whatever the element type and the order the sums arrive in), and each rank copies out what it needs.

    output  |<- rank 0's bytes ->|<- rank 1's bytes ->| ...      rounds of at most the slot's capacity each
"""

from __future__ import annotations

from typing import List, Optional

import torch

__all__ = ["ByteSink", "nbytes", "raw_bytes", "bytes_reason"]


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def raw_bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(-1).view(torch.uint8)


class ByteSink:
    """The bytes of ``outputs`` laid end to end, written by ranges as rounds complete: contiguous outputs in place,
    the others through a contiguous copy written back by :meth:`finish`."""

    def __init__(self, outputs: List[torch.Tensor]) -> None:
        self._targets = []
        self._staged = []
        offset = 0
        for o in outputs:
            if o.is_contiguous():
                raw = o.detach().view(-1).view(torch.uint8)
            else:
                staging = torch.empty(o.shape, dtype=o.dtype)
                self._staged.append((o, staging))
                raw = staging.view(-1).view(torch.uint8)
            self._targets.append((offset, raw))
            offset += raw.numel()
        self.nbytes = offset

    def write(self, at: int, data: torch.Tensor) -> None:
        """Bytes ``at`` .. ``at + len(data)`` of the outputs end to end."""
        end = at + data.numel()
        for start, raw in self._targets:
            lo, hi = max(at, start), min(end, start + raw.numel())
            if lo < hi:
                raw[lo - start:hi - start].copy_(data[lo - at:hi - at])

    def finish(self) -> None:
        with torch.no_grad():
            for o, staging in self._staged:
                o.copy_(staging)


def bytes_reason(tensors: List[torch.Tensor]) -> Optional[str]:
    """Why the agent cannot move these tensors' bytes (None: it can)."""
    for t in tensors:
        if t.device.type != "cpu":
            return f"{t.device.type} tensors: inagg moves the bytes of CPU tensors only (all_reduce stages CUDA)"
        if t.layout != torch.strided:
            return f"{t.layout} tensors"
    return None
