"""The collectives that move bytes (all-gather, broadcast, barrier) as an int32 all-reduce: each rank writes its bytes
at their place in a zeroed buffer, the agent (and the switch) sum the buffers as int32, and a sum of one value and
zeros is that value: exact, whatever the element type, whatever order the sums arrive in.

    buffer  |<- region 0: nbytes, padded to ALIGN ->|<- region 1 ... ->|
    rank r  |  0 ... 0 | rank r's bytes | 0 ... 0  |       ...        |
"""

from __future__ import annotations

from typing import Callable, List, Optional

import torch

__all__ = ["ALIGN", "Region", "nbytes", "raw_bytes", "copy_into", "bytes_reason"]


class Region:
    """A span of an exchange: ``nbytes`` long, this rank's ``parts`` (offset, uint8 data) in it, and what takes the
    summed bytes (None: nothing, as for a barrier)."""

    __slots__ = ("nbytes", "parts", "copy_out")

    def __init__(self, nbytes: int, parts, copy_out) -> None:
        self.nbytes = nbytes
        self.parts = parts
        self.copy_out = copy_out


#: Regions start at multiples of this, so that their bytes view as any element type.
ALIGN = 16


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def raw_bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(-1).view(torch.uint8)


def copy_into(outputs: List[torch.Tensor]) -> Callable[[torch.Tensor], None]:
    """A copy-out that fills ``outputs`` in order from the region's bytes."""

    def copy(raw: torch.Tensor) -> None:
        offset = 0
        for o in outputs:
            n = nbytes(o)
            with torch.no_grad():
                o.copy_(raw[offset:offset + n].view(o.dtype).view(o.shape))
            offset += n

    return copy


def bytes_reason(tensors: List[torch.Tensor]) -> Optional[str]:
    """Why the agent cannot move these tensors' bytes (None: it can)."""
    for t in tensors:
        if t.device.type != "cpu":
            return f"{t.device.type} tensors: inagg moves the bytes of CPU tensors only (all_reduce stages CUDA)"
        if t.layout != torch.strided:
            return f"{t.layout} tensors"
    return None
