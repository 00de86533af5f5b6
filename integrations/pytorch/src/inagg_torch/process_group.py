"""The ``inagg`` process group: all-reduce through the host's agent; every other collective through gloo."""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import uuid
from datetime import timedelta
from typing import Callable, Iterator, List, Optional

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future
from torch.futures import Future

from . import _protocol as p
from . import errors
from ._agent import AgentClient
from ._staging import DeviceStaging

log = logging.getLogger("inagg_torch")

ENV_HOST_ID = "INAGG_HOST_ID"
ENV_SWITCH_JOB = "INAGG_SWITCH_JOB"
ENV_TIMEOUT = "INAGG_TIMEOUT"
ENV_COLLECTIVE_TIMEOUT = "INAGG_COLLECTIVE_TIMEOUT"
#: Seconds a rank waits for the agent beyond the collective timeout before it gives up on the agent itself: room for
#: the switch stage (the agent's --peer-timeout, 30 s) after the last local rank submitted.
AGENT_GRACE_SECONDS = 60.0

#: Element types all-reduced by the agent (float16 and bfloat16 travel as float32, converted in the copies).
INAGG_DTYPES = {
    torch.float32: p.DTYPE_FLOAT32,
    torch.float16: p.DTYPE_FLOAT32,
    torch.bfloat16: p.DTYPE_FLOAT32,
    torch.int32: p.DTYPE_INT32,
}
_GLOO_SAME = (dist.ReduceOp.MIN, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT, dist.ReduceOp.BAND, dist.ReduceOp.BOR,
              dist.ReduceOp.BXOR)
_said = set()
_said_lock = threading.Lock()


def _say_once(key: str, message: str, *args) -> None:
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    log.warning(message, *args)


def _seconds(variable: str, default: float) -> float:
    text = os.environ.get(variable)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"inagg: {variable}={text!r} is not a positive number of seconds")
    return value


def _op_name(op) -> str:
    inner = getattr(op, "op", op)
    return str(getattr(inner, "name", inner))


def _op_code(op) -> Optional[int]:
    if op == dist.ReduceOp.SUM:
        return p.OP_SUM
    if op == dist.ReduceOp.AVG:
        return p.OP_AVG
    return None


class ProcessGroupInagg(dist.ProcessGroup):
    """A torch.distributed process group whose all-reduce runs on the inagg agent (shared memory in the host, the
    switch between hosts). Rank, world size and the job's identity come from what torch passes (store, rank, size,
    ``TORCHELASTIC_RUN_ID``); the other collectives run on a gloo group made from the same store."""

    def __init__(self, store: dist.Store, rank: int, size: int, timeout: timedelta, *,
                 staging: Optional[DeviceStaging] = None) -> None:
        """``staging``: how device tensors go through the shared buffer (tests pass one with a stand-in for CUDA)."""
        super().__init__(rank, size)
        self._rank = rank
        self._size = size
        self._staging = staging if staging is not None else DeviceStaging()
        group_seconds = timeout.total_seconds() if timeout is not None else 1800.0
        # The agent fails a round that waits longer than this for a local rank, naming it; the rank waits a little
        # longer for that answer, so that the named error, not a bare timeout, is what it raises.
        self.collective_timeout = _seconds(ENV_COLLECTIVE_TIMEOUT, group_seconds)
        seconds = _seconds(ENV_TIMEOUT, group_seconds)
        agent_wait = _seconds(ENV_TIMEOUT, self.collective_timeout + AGENT_GRACE_SECONDS)
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("inagg/gloo/", store), rank, size,
                                           timedelta(seconds=seconds))
        # Collectives this class does not override (torch adds new ones: all_gather_single, ...) reach gloo too.
        for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
            self._register_backend(torch.device(device), dist.ProcessGroup.BackendType.CUSTOM, self._gloo)
        host = os.environ.get(ENV_HOST_ID) or socket.gethostname()
        store.set(f"inagg/host/{rank}", host)
        hosts_of = [store.get(f"inagg/host/{r}").decode() for r in range(size)]
        hosts = list(dict.fromkeys(hosts_of))
        local = [r for r in range(size) if hosts_of[r] == host]
        if rank == 0:
            run = os.environ.get("TORCHELASTIC_RUN_ID", "pg")
            store.set("inagg/key", f"{run}-{uuid.uuid4().hex[:16]}")
        self.job_key = store.get("inagg/key").decode()
        self.local_rank = local.index(rank)
        self.local_world_size = len(local)
        self.host_index = hosts.index(host)
        self.hosts = len(hosts)
        self._client = AgentClient(rank=rank, world_size=size, local_rank=self.local_rank,
                                   local_world_size=self.local_world_size, host_index=self.host_index,
                                   hosts=self.hosts, switch_job=int(os.environ.get(ENV_SWITCH_JOB, "1")),
                                   job_key=self.job_key, timeout=agent_wait,
                                   collective_timeout=self.collective_timeout, staging=self._staging)
        self._queue: "queue.Queue[Optional[_Task]]" = queue.Queue()
        # Collectives run one at a time in submission order: on the group's thread, or on the caller's when it waits
        # for one that nothing has started and all before it finished (a synchronous all_reduce: two thread hand-offs
        # fewer per call).
        self._claim = threading.Lock()
        self._execute = threading.Lock()
        self._submitted = 0
        self._finished = 0
        self._thread = threading.Thread(target=self._run, name=f"inagg-rank{rank}", daemon=True)
        self._thread.start()
        if not self._staging.available() and self.local_rank == 0:
            _say_once("cuda", "inagg: CUDA is not available here: CPU tensors only (CUDA tensors are staged through "
                              "the shared buffer where CUDA exists)")
        log.info("inagg: rank %d/%d joined job %s as local rank %d/%d of host %d/%d via %s", rank, size,
                 self.job_key, self.local_rank, self.local_world_size, self.host_index, self.hosts,
                 self._client.socket_path)

    # --- plumbing -------------------------------------------------------------------------------------------------

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return "inagg"

    @property
    def gloo(self) -> dist.ProcessGroup:
        """The gloo group the other collectives (and fallbacks) run on."""
        return self._gloo

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            if self._take(task, inline=False):
                self._execute_task(task)

    def _take(self, task: "_Task", inline: bool) -> bool:
        """Claims ``task`` for this thread: the group's thread takes any task nobody took (it dequeues them in order);
        a waiting caller only the next one to run, so that collectives never overtake each other."""
        with self._claim:
            if task.claimed or (inline and task.sequence != self._finished + 1):
                return False
            task.claimed = True
            return True

    def _execute_task(self, task: "_Task") -> None:
        error: Optional[BaseException] = None
        with self._execute:
            try:
                task.body()
            except BaseException as ex:  # noqa: BLE001 - handed to the caller through the future
                error = ex
            with self._claim:
                self._finished = task.sequence  # before the future: its waiter may run the next one at once
        if error is not None:
            task.future.set_exception(error)
        else:
            task.future.set_result(task.result)

    def _submit(self, body: Callable[[], None], result, inline: bool = True) -> dist.Work:
        with self._claim:
            self._submitted += 1
            task = _Task(self._submitted, body, Future(), result)
        self._queue.put(task)
        return InaggWork(task.future, (lambda: self._take(task, inline=True) and self._execute_task(task))
                         if inline else None)

    def shutdown(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=60)
        self._client.close()

    def __del__(self) -> None:
        try:
            self._queue.put(None)
            self._client.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # --- all-reduce -----------------------------------------------------------------------------------------------

    def allreduce(self, tensors: List[torch.Tensor], opts=None) -> dist.Work:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(list(tensors), op, coalesced=False)

    def allreduce_coalesced(self, tensors: List[torch.Tensor], opts=None) -> dist.Work:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(list(tensors), op, coalesced=True)

    def _allreduce(self, tensors: List[torch.Tensor], op, coalesced: bool) -> dist.Work:
        code = _op_code(op)
        dtypes = {t.dtype for t in tensors}
        if code is not None and all(d in INAGG_DTYPES for d in dtypes):
            if not any(t.device.type != "cpu" for t in tensors):
                return self._submit(lambda: self._reduce_all(tensors, code), tensors)
            marks = self._staging.mark(tensors)  # on the caller's thread: after what its streams queued so far

            def staged() -> None:
                self._staging.wait(marks)
                self._reduce_all(tensors, code)
                self._staging.finish(tensors)

            return self._submit(staged, tensors, inline=False)  # device copies stay on the group's thread and streams
        return self._fallback(tensors, op, code, dtypes, coalesced)

    def _fallback(self, tensors, op, code, dtypes, coalesced: bool) -> dist.Work:
        if code is None and not any(op == same for same in _GLOO_SAME):
            raise errors.UnsupportedError(f"inagg: all_reduce op {_op_name(op)} is not supported (inagg: SUM, AVG; gloo: MIN, "
                                          "MAX, PRODUCT, BAND, BOR, BXOR)")
        if code is None:
            _say_once(f"op{_op_name(op)}", "inagg: all_reduce %s runs on gloo (same result; inagg sums SUM and AVG)",
                      _op_name(op))
        else:
            other = sorted(str(d) for d in dtypes if d not in INAGG_DTYPES)
            _say_once(f"dtype{other}", "inagg: all_reduce of %s runs on gloo (same result; inagg sums float32, "
                                       "float16, bfloat16, int32)", ", ".join(other))
        if code == p.OP_AVG:
            if any(not (t.is_floating_point() or t.is_complex()) for t in tensors):
                raise errors.UnsupportedError("inagg: AVG of integer tensors other than int32 is not supported")
            work = self._gloo_allreduce(tensors, dist.ReduceOp.SUM, coalesced)
            size = self._size

            def divide(fut):
                fut.value()
                for t in tensors:
                    t.div_(size)
                return tensors

            return _create_work_from_future(work.get_future().then(divide))
        return self._gloo_allreduce(tensors, op if code is None else dist.ReduceOp.SUM, coalesced)

    def _gloo_allreduce(self, tensors, op, coalesced: bool) -> dist.Work:
        if coalesced:
            return _chain([self._gloo.allreduce([t], _ar_opts(op)) for t in tensors], tensors)
        return self._gloo.allreduce(tensors, _ar_opts(op))

    def _reduce_all(self, tensors: List[torch.Tensor], op: int) -> None:
        """Runs on this group's thread: the tensors of one dtype class go together, in the caller's order."""
        for dtype in (p.DTYPE_FLOAT32, p.DTYPE_INT32):
            group = [t for t in tensors if INAGG_DTYPES[t.dtype] == dtype]
            if group:
                self._reduce_group(group, dtype, op)

    def _reduce_group(self, tensors: List[torch.Tensor], dtype: int, op: int) -> None:
        staged = []
        flats = []
        for t in tensors:
            if t.is_contiguous():
                flats.append(t.view(-1))
            else:
                c = t.contiguous()
                staged.append((t, c))
                flats.append(c.view(-1))
        total = sum(f.numel() for f in flats)
        for pieces in _rounds(flats, self._client.elements):
            self._client.round(pieces, dtype, op, total)
        for t, c in staged:
            t.copy_(c)

    # --- everything else: gloo ------------------------------------------------------------------------------------

    def broadcast(self, tensors, opts):
        return self._gloo.broadcast(tensors, opts)

    def allgather(self, output_tensors, input_tensors, opts=None):
        return self._gloo.allgather(output_tensors, input_tensors, opts or dist.AllgatherOptions())

    def _allgather_base(self, output, input, opts=None):
        return self._gloo._allgather_base(output, input, opts or dist.AllgatherOptions())

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        return self._gloo.allgather_into_tensor_coalesced(outputs, inputs, opts or dist.AllgatherOptions())

    def gather(self, output_tensors, input_tensors, opts):
        return self._gloo.gather(output_tensors, input_tensors, opts)

    def scatter(self, output_tensors, input_tensors, opts):
        return self._gloo.scatter(output_tensors, input_tensors, opts)

    def reduce(self, tensors, opts):
        return self._gloo.reduce(tensors, opts)

    def reduce_scatter(self, output_tensors, input_tensors, opts):
        return self._gloo.reduce_scatter(output_tensors, input_tensors, opts)

    def _reduce_scatter_base(self, output, input, opts):
        return self._gloo._reduce_scatter_base(output, input, opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts):
        return self._gloo.reduce_scatter_tensor_coalesced(outputs, inputs, opts)

    def alltoall(self, output_tensors, input_tensors, opts):
        return self._gloo.alltoall(output_tensors, input_tensors, opts)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._gloo.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    def barrier(self, opts=None):
        return self._gloo.barrier(opts or dist.BarrierOptions())

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        return self._gloo.monitored_barrier(timeout, wait_all_ranks)

    def send(self, tensors, dst_rank, tag):
        return self._gloo.send(tensors, dst_rank, tag)

    def recv(self, tensors, src_rank, tag):
        return self._gloo.recv(tensors, src_rank, tag)

    def recv_anysource(self, tensors, tag):
        return self._gloo.recv_anysource(tensors, tag)


class _Task:
    """One collective of a group: its place in the group's order, what it runs, and who took it."""

    __slots__ = ("sequence", "body", "future", "result", "claimed")

    def __init__(self, sequence: int, body: Callable[[], None], future: Future, result) -> None:
        self.sequence = sequence
        self.body = body
        self.future = future
        self.result = result
        self.claimed = False


class InaggWork(dist._Work):
    """A collective in flight: ``wait()`` returns when the result is in the tensors and raises the collective's error
    (Works made by ``_create_work_from_future`` swallow it). A ``wait()`` on a collective that nothing started yet, with
    every earlier one finished, runs it on the waiting thread (what a synchronous ``all_reduce`` does)."""

    def __init__(self, future: Future, run_here: Optional[Callable[[], object]] = None) -> None:
        super().__init__()
        self._future = future
        self._run_here = run_here

    def wait(self, timeout: Optional[timedelta] = None) -> bool:
        if self._run_here is not None and not self._future.done():
            self._run_here()
        self._future.wait()  # raises the collective's exception
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        if not self._future.done():
            return False
        try:
            self._future.value()
            return True
        except Exception:  # noqa: BLE001 - the question is only whether it failed
            return False

    def exception(self):
        try:
            self._future.value()
            return None
        except Exception as ex:  # noqa: BLE001
            return ex

    def result(self):
        return self._future.value()

    def get_future(self) -> Future:
        return self._future


def _ar_opts(op) -> dist.AllreduceOptions:
    o = dist.AllreduceOptions()
    o.reduceOp = op
    return o


def _chain(works: List[dist.Work], result) -> dist.Work:
    future = torch.futures.collect_all([w.get_future() for w in works])

    def done(f):
        for each in f.value():
            each.value()
        return result

    return _create_work_from_future(future.then(done))


def _rounds(flats: List[torch.Tensor], elements: int) -> Iterator[list]:
    """Splits the flat tensors into rounds of at most ``elements``: (tensor, start, length) pieces in order."""
    pieces: list = []
    room = elements
    produced = False
    for flat in flats:
        start = 0
        n = flat.numel()
        while start < n:
            take = min(room, n - start)
            pieces.append((flat, start, take))
            start += take
            room -= take
            if room == 0:
                yield pieces
                produced = True
                pieces = []
                room = elements
    if pieces or not produced:
        yield pieces


def create(store: dist.Store, rank: int, size: int, timeout: timedelta) -> ProcessGroupInagg:
    """torch.distributed's constructor for the ``inagg`` backend."""
    return ProcessGroupInagg(store, rank, size, timeout)
