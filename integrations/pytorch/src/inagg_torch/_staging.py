"""How tensors that live on a device (CUDA) go through the job's shared buffer.

A CPU tensor is copied into the rank's data slot and the result out of the result slot, one ``copy_`` each way. A
device tensor takes the same two copies, which are then the device-to-host and host-to-device transfers: the shared
buffer is the staging buffer, registered with CUDA (``cudaHostRegister``) so that both run at pinned-memory speed. What
a device adds is ordering, since the collective runs on the group's own thread while the caller's kernels run on the
caller's stream:

1. on the caller's thread, when the collective is submitted, an event is recorded on each device's current stream
   (:meth:`DeviceStaging.mark`): the collective reads what the caller's kernels queued before the call, no more;
2. on the group's thread, that event is waited for before the first copy in (:meth:`DeviceStaging.wait`);
3. after the last copy out (and the copy back into a non-contiguous tensor), the group's stream is synchronized
   (:meth:`DeviceStaging.finish`), so the Work completes only when the result is in the device tensor.

The CUDA module is a constructor argument so that the ordering is tested on machines without a GPU
(``tests/test_staging.py``).
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, List, Optional

import torch

log = logging.getLogger("inagg_torch")


class DeviceStaging:
    """Stages device tensors through the shared buffer (module docstring); CPU tensors pass untouched."""

    def __init__(self, cuda: Optional[Any] = None) -> None:
        #: ``torch.cuda``, or a stand-in with ``is_available()``, ``current_stream(device)`` (streams with
        #: ``record_event()`` and ``synchronize()``) and ``cudart()`` (``cudaHostRegister``/``cudaHostUnregister``).
        self.cuda = cuda if cuda is not None else torch.cuda
        self._pinned: List[int] = []

    def available(self) -> bool:
        """Whether device tensors can exist here (CUDA is available)."""
        return bool(self.cuda.is_available())

    def pin(self, *buffers: torch.Tensor) -> None:
        """Registers the mapped buffers with CUDA where it is available; unpinned copies work too, only slower."""
        if not self.available():
            return
        try:
            cudart = self.cuda.cudart()
            for b in buffers:
                cudart.cudaHostRegister(b.data_ptr(), b.numel() * b.element_size(), 0)
                self._pinned.append(b.data_ptr())
        except Exception as ex:  # noqa: BLE001 - e.g. a driver refusing shared mappings: the copies stay correct
            log.info("inagg: shared buffer not registered with CUDA (%s); CUDA tensors are staged unpinned", ex)

    def unpin(self) -> None:
        """Undoes :meth:`pin` (before the mapping goes away)."""
        if not self._pinned:
            return
        cudart = self.cuda.cudart()
        for pointer in self._pinned:
            try:
                cudart.cudaHostUnregister(pointer)
            except Exception:  # noqa: BLE001 - on the way out
                pass
        self._pinned = []

    @staticmethod
    def devices(tensors: Iterable[torch.Tensor]) -> List[torch.device]:
        """The devices other than the CPU that ``tensors`` live on, each once."""
        return list(dict.fromkeys(t.device for t in tensors if t.device.type != "cpu"))

    def mark(self, tensors: Iterable[torch.Tensor]) -> list:
        """On the caller's thread: an event on each device's current stream, for :meth:`wait`."""
        return [self.cuda.current_stream(d).record_event() for d in self.devices(tensors)]

    @staticmethod
    def wait(marks: list) -> None:
        """On the group's thread, before the first copy in: what the caller queued before the call has run."""
        for event in marks:
            event.synchronize()

    def finish(self, tensors: Iterable[torch.Tensor]) -> None:
        """On the group's thread, after the last copy out: the result is in the device tensors."""
        for d in self.devices(tensors):
            self.cuda.current_stream(d).synchronize()
