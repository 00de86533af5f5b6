"""Device (CUDA) tensors staged through the shared buffer, on a machine without a GPU.

The stand-ins: ``FakeCuda`` replaces the ``torch.cuda`` module the staging talks to (streams, events, host
registration), and ``DeviceTensor`` is a CPU tensor that says it lives on ``cuda:0`` and logs every copy that crosses
between it and a host tensor. Two ranks of one host run in threads of this process against the session's agent, so
the sums are real: what these tests prove is that a tensor that is not on the CPU is copied into the shared buffer
after the caller's stream reached the call, summed by the agent, copied back into the same device tensor, and that
the Work completes only after the device stream was synchronized.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import List, Tuple

import pytest
import torch
import torch.distributed as dist

import inagg_torch
from inagg_torch import _fallback
from inagg_torch._staging import DeviceStaging

from conftest import CHUNK_BYTES, CHUNKED, SLOT_BYTES

Event = Tuple[str, str, str]  # (what, thread name, detail)
_log: List[Event] = []
_log_lock = threading.Lock()


def _note(what: str, detail: str = "") -> None:
    with _log_lock:
        _log.append((what, threading.current_thread().name, detail))


class DeviceTensor(torch.Tensor):
    """A CPU tensor that reports ``device cuda:0`` and logs copies to and from host tensors (d2h, h2d, d2d)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        prop = getattr(func, "__self__", None)
        if getattr(func, "__name__", "") == "__get__" and prop is not None:
            if getattr(prop, "__name__", "") == "device":
                return torch.device("cuda", 0)
            if getattr(prop, "__name__", "") == "is_cuda":
                return True
        if func is torch.Tensor.copy_:
            dst_device, src_device = isinstance(args[0], DeviceTensor), isinstance(args[1], DeviceTensor)
            _note({(False, True): "d2h", (True, False): "h2d", (True, True): "d2d"}.get((dst_device, src_device),
                                                                                         "h2h"), str(args[1].numel()))
        return super().__torch_function__(func, types, args, kwargs or {})


def on_device(t: torch.Tensor) -> torch.Tensor:
    return t.clone().as_subclass(DeviceTensor)


class FakeCuda:
    """Stands in for ``torch.cuda``: what :class:`DeviceStaging` calls, logged."""

    def __init__(self, available: bool = True) -> None:
        self._available = available
        self.registered: List[Tuple[int, int]] = []
        self.unregistered: List[int] = []

    def is_available(self) -> bool:
        return self._available

    def current_stream(self, device):
        assert device == torch.device("cuda", 0), device
        return _Stream()

    def cudart(self):
        return self

    def cudaHostRegister(self, pointer: int, size: int, flags: int) -> None:  # noqa: N802 (CUDA's name)
        self.registered.append((pointer, size))

    def cudaHostUnregister(self, pointer: int) -> None:  # noqa: N802
        self.unregistered.append(pointer)


class _Stream:
    def record_event(self):
        _note("record")
        return _Event()

    def synchronize(self) -> None:
        _note("stream-sync")


class _Event:
    def synchronize(self) -> None:
        _note("event-wait")


def two_ranks(body, staging_of) -> list:
    """Runs ``body(rank, pg)`` for ranks 0 and 1 of one host, each on a thread named ``caller-<rank>``."""
    store = dist.HashStore()
    out: list = [None, None]

    def run(rank: int) -> None:
        try:
            pg = inagg_torch.ProcessGroupInagg(store, rank, 2, timedelta(seconds=60), staging=staging_of(rank))
            try:
                out[rank] = body(rank, pg)
            finally:
                pg.shutdown()
        except BaseException as ex:  # noqa: BLE001 - re-raised below on the test's thread
            out[rank] = ex

    threads = [threading.Thread(target=run, args=(r,), name=f"caller-{r}") for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "a rank thread did not finish within 120 s"
    for each in out:
        if isinstance(each, BaseException):
            raise each
    return out


def inputs(rank: int):
    g = torch.Generator().manual_seed(rank)
    return (torch.randn(50_000, generator=g),                   # several rounds (the test agent's slot: 16 Ki)
            torch.randn(300, 7, generator=g).t(),                  # non-contiguous
            torch.randn(1000, generator=g).to(torch.float16))      # widened in the copy in, rounded in the copy out


def test_device_tensors_are_copied_in_after_the_callers_stream_summed_and_copied_back(agent_env):
    del _log[:]
    fakes = [FakeCuda(), FakeCuda()]

    def body(rank: int, pg):
        device = [on_device(t) for t in inputs(rank)]
        host = torch.ones(10)
        for t in device:
            pg.allreduce([t]).wait()
        pg.allreduce([host]).wait()
        pinned = [(pg._client._data.data_ptr(), pg._client._data.numel()),
                  (pg._client._result.data_ptr(), pg._client._result.numel())]
        return device, host, pinned

    results = two_ranks(body, lambda r: DeviceStaging(fakes[r]))
    want = [a.double() + b.double() for a, b in zip(inputs(0), inputs(1))]
    for rank, (device, host, pinned) in enumerate(results):
        for t, w, dtype in zip(device, want, (torch.float32, torch.float32, torch.float16)):
            assert type(t) is DeviceTensor and t.device.type == "cuda" and t.dtype == dtype
            assert torch.allclose(t.double(), w, rtol=2 ** -9, atol=1e-5), (t.double() - w).abs().max()
        assert torch.equal(host, torch.full((10,), 2.0))
        # The data and result slots were registered for pinned copies, and unregistered when the group went away.
        assert fakes[rank].registered == pinned
        assert fakes[rank].unregistered == [pointer for pointer, _ in pinned]

    for rank in range(2):
        group = f"inagg-rank{rank}"
        mine = [e for e in _log if e[1] in (f"caller-{rank}", group)]
        # One collective per device tensor, in order: mark on the caller's thread, then on the group's thread wait,
        # copy in (device to host), copy out (host to device; for the non-contiguous one, into its contiguous copy
        # and then back, device to device), synchronize; the CPU tensor's all-reduce touches no stream.
        per_collective = []
        for what, thread, _ in mine:
            if what == "record":
                assert thread == f"caller-{rank}", mine
                per_collective.append([])
            assert per_collective, f"{what} before any collective was marked: {mine}"
            per_collective[-1].append(what if what == "record" else f"{what}@{thread == group}")
        assert len(per_collective) == 3, mine
        for steps in per_collective:
            assert steps[0] == "record" and steps[1] == "event-wait@True" and steps[-1] == "stream-sync@True", steps
            body = steps[2:-1]
            assert body and all(s.endswith("@True") for s in body), steps
        copies = [[s.split("@")[0] for s in steps[2:-1]] for steps in per_collective]
        # Each round copies in (chunk by chunk with chunked agents), then out. 50,000 float32 in rounds of the test
        # agent's 16 Ki-element slot: 4 rounds.
        assert copies[0] == round_copies(50_000), copies[0]
        # The non-contiguous tensor goes through a contiguous device copy, copied back into it device to device.
        assert copies[1] == round_copies(2100) + ["d2d"], copies[1]
        assert copies[2] == round_copies(1000), copies[2]


def round_copies(elements: int) -> List[str]:
    """The copies of a device tensor of ``elements`` float32 all-reduced alone on one host by the test agent: per round
    of its slot, one device-to-host copy per chunk (the round whole without chunks) and one copy back."""
    slot, chunk = SLOT_BYTES // 4, CHUNK_BYTES // 4 if CHUNKED else SLOT_BYTES // 4
    copies: List[str] = []
    for start in range(0, elements, slot):
        copies += ["d2h"] * -(-min(slot, elements - start) // chunk) + ["h2d"]
    return copies


def test_no_cuda_is_said_once_per_process_and_not_where_cuda_is(agent_env, monkeypatch, caplog):
    monkeypatch.setattr(_fallback, "_said", set())
    caplog.set_level(logging.WARNING, logger="inagg_torch")
    for available in (False, False, True):
        pg = inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=30),
                                           staging=DeviceStaging(FakeCuda(available)))
        pg.shutdown()
    said = [r.getMessage() for r in caplog.records if "CUDA is not available here" in r.getMessage()]
    assert said == ["inagg: CUDA is not available here: CPU tensors only (CUDA tensors are staged through the shared "
                    "buffer where CUDA exists)"], said
    monkeypatch.setattr(_fallback, "_said", set())
    caplog.clear()
    pg = inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=30),
                                       staging=DeviceStaging(FakeCuda(True)))
    pg.shutdown()
    assert not [r for r in caplog.records if "CUDA" in r.getMessage()]


def test_a_failed_round_of_a_device_tensor_raises_on_every_rank_and_leaves_it_unchanged(agent_env):
    """Sizes that differ: the error reaches each caller through the staged path; the device tensor keeps its values."""

    def body(rank: int, pg):
        t = on_device(torch.full((100 + rank,), float(rank + 1)))
        with pytest.raises(inagg_torch.TensorMismatchError, match="sizes differ"):
            pg.allreduce([t]).wait()
        return t

    for rank, t in enumerate(two_ranks(body, lambda r: DeviceStaging(FakeCuda()))):
        assert torch.equal(t.as_subclass(torch.Tensor), torch.full((100 + rank,), float(rank + 1)))
