"""The one way a collective that inagg does not carry reaches gloo: named, logged once per collective, refused
under ``INAGG_STRICT=1``; the forms gloo's Python binding lacks (the coalesced tensor forms, AVG) composed from those
it has."""

from __future__ import annotations

import logging
import os
import threading
from typing import Callable, List, Optional

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import AllgatherOptions, AllreduceOptions, ReduceScatterOptions
from torch.futures import Future

from . import errors
from ._executor import InaggWork

log = logging.getLogger("inagg_torch")

ENV_STRICT = "INAGG_STRICT"

_said = set()
_said_lock = threading.Lock()


def say_once(key: str, message: str, *args) -> None:
    """Logs ``message`` the first time ``key`` is seen in this process."""
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    log.warning(message, *args)


def strict() -> bool:
    """Whether ``INAGG_STRICT`` asks for an error instead of a fallback to gloo."""
    return os.environ.get(ENV_STRICT, "").strip().lower() not in ("", "0", "false", "no")


class GlooFallback:
    """The gloo group of one inagg group. Every call that reaches it goes through :meth:`run` (process_group passes
    its gloo calls in as ``call``), which is where strict mode and the log live."""

    def __init__(self, gloo, rank: int, size: int) -> None:
        self.gloo = gloo
        self.rank = rank
        self.size = size

    def run(self, name: str, reason: str, call: Callable[[], dist.Work]) -> dist.Work:
        """Runs ``call()``, which reaches gloo, for the collective ``name`` that inagg does not carry (``reason`` says
        why); under strict mode raises before anything is sent."""
        if strict():
            raise errors.UnsupportedError(f"inagg: {name} on rank {self.rank} would run on gloo ({reason}), and "
                                          f"{ENV_STRICT}=1 forbids falling back")
        say_once(f"fallback:{name}", "inagg: %s runs on gloo (%s); logged once per collective", name, reason)
        return call()

    # --- composed forms -------------------------------------------------------------------------------------------

    def allreduce(self, tensors: List[torch.Tensor], op, coalesced: bool) -> dist.Work:
        """All-reduce on gloo; AVG as SUM then a division (gloo has no AVG)."""
        if op == dist.ReduceOp.AVG:
            if any(not (t.is_floating_point() or t.is_complex()) for t in tensors):
                raise errors.UnsupportedError("inagg: AVG of integer tensors other than int32 is not supported")
            return self._divided(self.allreduce(tensors, dist.ReduceOp.SUM, coalesced), tensors, tensors)
        if coalesced:
            return chain([self.gloo.allreduce([t], _reduce_opts(AllreduceOptions(), op)) for t in tensors], tensors)
        return self.gloo.allreduce(tensors, _reduce_opts(AllreduceOptions(), op))

    def all_gather_tensors(self, outputs: List[torch.Tensor], inputs: List[torch.Tensor]) -> dist.Work:
        """``all_gather_single`` of each (output, input) pair, in order (gloo's binding has no coalesced form)."""
        return chain([self.gloo._allgather_base(o, i, AllgatherOptions()) for o, i in zip(outputs, inputs)], outputs)

    def reduce_scatter_tensors(self, outputs: List[torch.Tensor], inputs: List[torch.Tensor], op) -> dist.Work:
        """``reduce_scatter_single`` of each pair in order; AVG as SUM then a division."""
        if op == dist.ReduceOp.AVG:
            if any(not (t.is_floating_point() or t.is_complex()) for t in outputs):
                raise errors.UnsupportedError("inagg: AVG of integer tensors other than int32 is not supported")
            return self._divided(self.reduce_scatter_tensors(outputs, inputs, dist.ReduceOp.SUM), outputs, outputs)
        opts = _reduce_opts(ReduceScatterOptions(), op)
        return chain([self.gloo._reduce_scatter_base(o, i, opts) for o, i in zip(outputs, inputs)], outputs)

    def _divided(self, work: dist.Work, tensors: List[torch.Tensor], result) -> dist.Work:
        size = self.size

        def divide() -> None:
            for t in tensors:
                t.div_(size)

        return chain([work], result, then=divide)


def _reduce_opts(opts, op):
    opts.reduceOp = op
    return opts


def chain(works: List[dist.Work], result, then: Optional[Callable[[], None]] = None) -> dist.Work:
    """One Work for several, done when all are (then ``then()``), with ``result`` as its value. Waits on a thread of
    its own: some of gloo's Works have no future (its reduce-scatter)."""
    if len(works) == 1 and then is None:
        return works[0]
    future = Future()

    def wait_all() -> None:
        try:
            for w in works:
                w.wait()
            if then is not None:
                then()
        except BaseException as ex:  # noqa: BLE001 - handed to the waiter through the future
            future.set_exception(ex)
            return
        future.set_result(result)

    threading.Thread(target=wait_all, name="inagg-gloo-wait", daemon=True).start()
    return wrap(future, "gloo")


def wrap(future: Future, name: str) -> dist.Work:
    """The package's Work (raises errors, honours wait(timeout)) for ``future``."""
    return InaggWork(future, None, name)
