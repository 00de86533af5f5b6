"""The ``inagg`` process group: all-reduce, reduce-scatter, all-gather, broadcast and barrier through the host's agent;
the rest through gloo, by one path (:mod:`._fallback`)."""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import Callable, Iterator, List, Optional

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import AllgatherOptions, BroadcastOptions, ReduceScatterOptions

from . import _agreement, errors
from . import _protocol as p
from ._agent import AgentClient
from ._bytes import ByteSink, bytes_reason, nbytes, raw_bytes
from ._config import Config
from ._executor import InaggWork, SerialExecutor  # noqa: F401 - InaggWork: the Work of this group's collectives
from ._fallback import GlooFallback, say_once
from ._staging import DeviceStaging
from ._topology import Topology

log = logging.getLogger("inagg_torch")

#: Element types all-reduced by the agent (float16 and bfloat16 travel as float32, converted in the copies).
INAGG_DTYPES = {
    torch.float32: p.DTYPE_FLOAT32,
    torch.float16: p.DTYPE_FLOAT32,
    torch.bfloat16: p.DTYPE_FLOAT32,
    torch.int32: p.DTYPE_INT32,
}
_GLOO_SAME = (dist.ReduceOp.MIN, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT, dist.ReduceOp.BAND, dist.ReduceOp.BOR,
              dist.ReduceOp.BXOR)


def _op_name(op) -> str:
    inner = getattr(op, "op", op)
    return str(getattr(inner, "name", inner))


def _op_code(op) -> Optional[int]:
    """The agent's op for a torch ReduceOp (None: the agent has none; MIN and MAX cross the switch as its own MIN and
    MAX, exact)."""
    if op == dist.ReduceOp.SUM:
        return p.OP_SUM
    if op == dist.ReduceOp.AVG:
        return p.OP_AVG
    if op == dist.ReduceOp.MIN:
        return p.OP_MIN
    if op == dist.ReduceOp.MAX:
        return p.OP_MAX
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
        self.config = Config.from_env(timeout)
        self.collective_timeout = self.config.collective_timeout
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("inagg/gloo/", store), rank, size,
                                           timedelta(seconds=self.config.gloo_timeout))
        self._fallback = GlooFallback(self._gloo, rank, size)
        self._register_gloo_as_backend()
        self.topology = Topology.exchange(store, rank, size, self.config.host_id)
        self._client = self._join_agent(store)
        self._executor = SerialExecutor(f"inagg-rank{rank}")
        if not self._staging.available() and self.local_rank == 0:
            say_once("cuda", "inagg: CUDA is not available here: CPU tensors only (CUDA tensors are staged through "
                             "the shared buffer where CUDA exists)")
        log.info("inagg: rank %d/%d joined job %s as local rank %d/%d of host %d/%d via %s", rank, size,
                 self.job_key, self.local_rank, self.local_world_size, self.host_index, self.hosts,
                 self._client.socket_path)

    def _register_gloo_as_backend(self) -> None:
        """torch asks the group for its backend (FSDP2: for its allocator); every collective is overridden below, so
        that what inagg does not carry reaches gloo only through self._fallback (test_collectives checks the list)."""
        for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
            self._register_backend(torch.device(device), dist.ProcessGroup.BackendType.CUSTOM, self._gloo)

    def _join_agent(self, store: dist.Store) -> AgentClient:
        """This rank's membership in the job on its host's agent (started by local rank 0 when none listens), once
        every host's agent is known to cut tensors as the others do (:mod:`._agreement`; raises on every rank where
        they differ, before any tensor is sent)."""
        t = self.topology
        try:
            client = AgentClient(rank=t.rank, world_size=t.world_size, local_rank=t.local_rank,
                                 local_world_size=t.local_world_size, host_index=t.host_index, hosts=t.hosts,
                                 switch_job=self.config.switch_job, job_key=t.job_key, timeout=self.config.agent_wait,
                                 collective_timeout=self.collective_timeout, staging=self._staging)
        except BaseException as ex:
            with contextlib.suppress(Exception):  # the store's trouble must not hide this rank's own
                _agreement.failed(store, t, ex)
            raise
        try:
            _agreement.publish(store, t, _agreement.settings_of(client.capacity, client.network_chunk_bytes))
            _agreement.check(store, t, self.config.agent_wait)
        except BaseException:
            client.close()  # the agent frees the job once every local rank left
            raise
        return client

    # --- plumbing -------------------------------------------------------------------------------------------------

    @property
    def job_key(self) -> str:
        return self.topology.job_key

    @property
    def local_rank(self) -> int:
        return self.topology.local_rank

    @property
    def local_world_size(self) -> int:
        return self.topology.local_world_size

    @property
    def host_index(self) -> int:
        return self.topology.host_index

    @property
    def hosts(self) -> int:
        return self.topology.hosts

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return "inagg"

    @property
    def gloo(self) -> dist.ProcessGroup:
        """The gloo group the other collectives (and fallbacks) run on."""
        return self._gloo

    def _submit(self, body: Callable[[], None], result, inline: bool = True, name: str = "allreduce") -> dist.Work:
        return self._executor.submit(body, result, inline, name)

    def shutdown(self) -> None:
        self._executor.shutdown(timeout=60)
        self._client.close()

    def __del__(self) -> None:
        try:
            self._executor.stop()
            self._client.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown, or a group whose __init__ failed
            pass

    # --- all-reduce -----------------------------------------------------------------------------------------------

    def allreduce(self, tensors: List[torch.Tensor], opts=None) -> dist.Work:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(list(tensors), op, coalesced=False)

    def allreduce_coalesced(self, tensors: List[torch.Tensor], opts=None) -> dist.Work:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(list(tensors), op, coalesced=True)

    def _allreduce(self, tensors: List[torch.Tensor], op, coalesced: bool) -> dist.Work:
        name = "allreduce_coalesced" if coalesced else "allreduce"
        code = _op_code(op)
        dtypes = {t.dtype for t in tensors}
        if code is not None and all(d in INAGG_DTYPES for d in dtypes):
            if not any(t.device.type != "cpu" for t in tensors):
                return self._submit(lambda: self._reduce_all(tensors, code), tensors, name=name)
            marks = self._staging.mark(tensors)  # on the caller's thread: after what its streams queued so far

            def staged() -> None:
                self._staging.wait(marks)
                self._reduce_all(tensors, code)
                self._staging.finish(tensors)

            # device copies stay on the group's thread and streams
            return self._submit(staged, tensors, inline=False, name=name)
        if code is None and not any(op == same for same in _GLOO_SAME):
            raise errors.UnsupportedError(f"inagg: {name} op {_op_name(op)} is not supported (inagg: SUM, AVG; gloo: "
                                          "MIN, MAX, PRODUCT, BAND, BOR, BXOR)")
        return self._fallback.run(name, _sum_reason(op, code, dtypes),
                                  lambda: self._fallback.allreduce(tensors, op if code is None else _TORCH_OP[code],
                                                                   coalesced))

    def _reduce_all(self, tensors: List[torch.Tensor], op: int) -> None:
        """Runs on this group's thread: the tensors of one dtype class go together, in the caller's order."""
        for dtype in (p.DTYPE_FLOAT32, p.DTYPE_INT32):
            group = [t for t in tensors if INAGG_DTYPES[t.dtype] == dtype]
            if group:
                self._reduce_group(group, dtype, op)

    def _reduce_group(self, tensors: List[torch.Tensor], dtype: int, op: int, copy_out=None) -> None:
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
            self._client.round(pieces, dtype, op, total, copy_out)
        for t, c in staged:
            t.copy_(c)

    # --- collectives that move bytes: the agent's GATHER rounds (_bytes.py) ---------------------------------------

    def broadcast(self, tensors, opts=None):
        name = "broadcast"
        opts = opts or BroadcastOptions()
        tensors = list(tensors)
        root = opts.rootRank
        if not 0 <= root < self._size:
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: root rank {root} is not in "
                                       f"0..{self._size - 1} (world size {self._size})")
        if not 0 <= opts.rootTensor < len(tensors):
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: root tensor {opts.rootTensor} of "
                                       f"{len(tensors)} tensors")
        reason = bytes_reason(tensors) or ("several tensors in one call" if len(tensors) != 1 else None)
        if reason is not None:
            return self._fallback.run(name, reason, lambda: self._gloo.broadcast(tensors, opts))
        t = tensors[0]
        mine = (0, raw_bytes(t).clone()) if self._rank == root else None
        spans = list(_spans(nbytes(t), self._client.elements * 4))
        if self._parted:  # one part, the root's: the switch sends it from the root's host only
            spans = [(at, length, (-(-length // 4), root)) for at, length, _ in spans]
        return self._submit(lambda: self._move(nbytes(t), mine, None if self._rank == root else ByteSink([t]), spans),
                            tensors, name=name)

    def allgather(self, output_tensors, input_tensors, opts=None):
        name = "allgather"
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            return self._fallback.run(name, "several tensors in one call",
                                      lambda: self._gloo.allgather(output_tensors, input_tensors, opts or
                                                                   AllgatherOptions()))
        outs, t = list(output_tensors[0]), input_tensors[0]
        if len(outs) != self._size:
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {len(outs)} output tensors for world "
                                       f"size {self._size}")
        for r, o in enumerate(outs):
            self._check_pair(name, o, t, t.numel(), f"output {r}")
        reason = bytes_reason(outs + [t])
        if reason is not None:
            return self._fallback.run(name, reason, lambda: self._gloo.allgather(output_tensors, input_tensors,
                                                                                 opts or AllgatherOptions()))
        n = nbytes(t)
        mine, spans = (self._rank * n, raw_bytes(t).clone()), self._gather_spans(n)
        return self._submit(lambda: self._move(n * self._size, mine, ByteSink(outs), spans), output_tensors, name=name)

    def all_gather_single(self, output, input, opts=None):
        return self._all_gather_tensors("all_gather_single", [output], [input], opts)

    def _allgather_base(self, output, input, opts=None):
        return self._all_gather_tensors("_allgather_base", [output], [input], opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        return self._all_gather_tensors("allgather_into_tensor_coalesced", list(outputs), list(inputs), opts)

    def all_gather_single_coalesced(self, outputs, inputs, opts=None):
        return self._all_gather_tensors("all_gather_single_coalesced", list(outputs), list(inputs), opts)

    def _all_gather_tensors(self, name: str, outputs: List[torch.Tensor], inputs: List[torch.Tensor], opts):
        """all_gather_into_tensor: this rank's bytes at its place, zeros elsewhere, summed as int32 (exact)."""
        self._check_count(name, outputs, inputs)
        for i, (o, t) in enumerate(zip(outputs, inputs)):
            self._check_pair(name, o, t, t.numel() * self._size, f"output {i}" if len(outputs) > 1 else "output",
                             "input")
        reason = bytes_reason(outputs + inputs)
        if reason is not None:
            return self._fallback.run(name, reason, lambda: self._fallback.all_gather_tensors(outputs, inputs))
        # this rank's bytes now, on the caller's thread: the inputs may change once the call returned
        moves = [(nbytes(t) * self._size, (self._rank * nbytes(t), raw_bytes(t).clone()), ByteSink([o]),
                  self._gather_spans(nbytes(t))) for o, t in zip(outputs, inputs)]

        def body() -> None:
            for move in moves:
                self._move(*move)

        return self._submit(body, outputs if len(outputs) > 1 else outputs[0], name=name)

    def barrier(self, opts=None):
        """A one-word GATHER round that gives nothing: returns on each rank once every rank called it."""
        return self._submit(lambda: self._move(4, None, None, [(0, 4, (0, 0))]), None, name="barrier")

    @property
    def _parted(self) -> bool:
        """Whether rounds carry their parts to the agent, so that the switch sends each host only what it needs."""
        return self.hosts > 1 and self.topology.by_host

    def _gather_spans(self, part: int) -> list:
        """The rounds of an all-gather of ``part`` bytes per rank: (start, length, (part words, first part's rank))
        aligned to the ranks' parts when :attr:`_parted` and the parts are whole int32 words."""
        capacity = self._client.elements * 4
        if not self._parted or part % 4:
            return list(_spans(part * self._size, capacity))
        return [(at, length, (words // 4, rank)) for at, length, (words, rank) in _part_spans(part * self._size,
                                                                                               capacity, part)]

    def _move(self, total: int, mine, sink: Optional[ByteSink], spans) -> None:
        """Runs on this group's thread: ``total`` bytes in the GATHER rounds ``spans`` ((start, length, parts) each);
        ``mine`` is this rank's (offset, uint8 bytes) or None; ``sink`` takes the rounds' bytes (None: nothing)."""
        words = -(-total // 4)
        for at, length, parts in spans:
            give = None
            if mine is not None:
                start, data = mine
                lo, hi = max(at, start), min(at + length, start + data.numel())
                if lo < hi:
                    give = (lo - at, data[lo - start:hi - start])
            result = self._client.gather_round(length, words, give, parts)
            if sink is not None:
                sink.write(at, result)
        if sink is not None:
            sink.finish()

    # --- reduce-scatter: an all-reduce of which each rank keeps its part ------------------------------------------

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        name = "reduce_scatter"
        opts = opts or ReduceScatterOptions()
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            return self._fallback.run(name, "several tensors in one call",
                                      lambda: self._gloo.reduce_scatter(output_tensors, input_tensors, opts))
        out, ins = output_tensors[0], list(input_tensors[0])
        if len(ins) != self._size:
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {len(ins)} input tensors for world "
                                       f"size {self._size}")
        for r, t in enumerate(ins):
            self._check_pair(name, out, t, t.numel(), "output", f"input {r}")
        code = _op_code(opts.reduceOp)
        reason = self._sum_here(code, opts.reduceOp, [out] + ins)
        if reason is not None:
            if code == p.OP_AVG:
                return self._fallback.run(name, reason, lambda: self._fallback.reduce_scatter_tensors(
                    [out], [torch.cat([t.reshape(-1) for t in ins])], opts.reduceOp))
            return self._fallback.run(name, reason, lambda: self._gloo.reduce_scatter(output_tensors, input_tensors,
                                                                                      opts))
        return self._reduce_scatter_here(name, [out], [torch.cat([t.reshape(-1) for t in ins])], code, output_tensors)

    def reduce_scatter_single(self, output, input, opts=None):
        return self._reduce_scatter_tensors("reduce_scatter_single", [output], [input], opts)

    def _reduce_scatter_base(self, output, input, opts=None):
        return self._reduce_scatter_tensors("_reduce_scatter_base", [output], [input], opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        return self._reduce_scatter_tensors("reduce_scatter_tensor_coalesced", list(outputs), list(inputs), opts)

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
        return self._reduce_scatter_tensors("reduce_scatter_single_coalesced", list(outputs), list(inputs), opts)

    def _reduce_scatter_tensors(self, name: str, outputs: List[torch.Tensor], inputs: List[torch.Tensor], opts):
        opts = opts or ReduceScatterOptions()
        self._check_count(name, outputs, inputs)
        for i, (o, t) in enumerate(zip(outputs, inputs)):
            self._check_pair(name, o, t, t.numel(), f"output {i}" if len(outputs) > 1 else "output", "input",
                             scatter=True)
        code = _op_code(opts.reduceOp)
        reason = self._sum_here(code, opts.reduceOp, outputs + inputs)
        if reason is not None:
            return self._fallback.run(name, reason,
                                      lambda: self._fallback.reduce_scatter_tensors(outputs, inputs, opts.reduceOp))
        flats = [t.reshape(-1) for t in inputs]
        return self._reduce_scatter_here(name, outputs, flats, code, outputs if len(outputs) > 1 else outputs[0])

    def _reduce_scatter_here(self, name, outputs, flats, code: int, result) -> dist.Work:
        """The whole input summed through the agent (SUM/AVG as all_reduce does them); each rank copies out of each
        round only what falls in its part. Over several hosts the switch still carries the whole tensor to each."""
        copies = [torch.empty(f.numel(), dtype=f.dtype) for f in flats]
        for c, f in zip(copies, flats):
            c.copy_(f)  # now, on the caller's thread: the inputs are never written
        rank = self._rank

        def body() -> None:
            sinks = [(c.data_ptr(), ByteSink([o]), o.numel(), o.element_size()) for c, o in zip(copies, outputs)]
            part_of = {ptr: (sink, m) for ptr, sink, m, _ in sinks}

            def take(pieces, summed: torch.Tensor) -> None:
                offset = 0
                for flat, start, length in pieces:
                    sink, m = part_of[flat.data_ptr()]
                    lo, hi = max(start, rank * m), min(start + length, (rank + 1) * m)
                    if lo < hi:
                        part = summed[offset + lo - start:offset + hi - start].to(flat.dtype)
                        sink.write((lo - rank * m) * flat.element_size(), part.view(torch.uint8))
                    offset += length

            if self._parted:  # each tensor in rounds of whole parts (or pieces of one): the switch's reduce-scatter
                for c in copies:
                    for start, length, parts in _part_spans(c.numel(), self._client.elements, c.numel() // self._size):
                        self._client.round([(c, start, length)] if length else [], INAGG_DTYPES[c.dtype], code,
                                           c.numel(), take, parts)
            else:
                for dtype in (p.DTYPE_FLOAT32, p.DTYPE_INT32):
                    group = [c for c in copies if INAGG_DTYPES[c.dtype] == dtype]
                    if group:
                        self._reduce_group(group, dtype, code, take)
            for _, sink, _, _ in sinks:
                sink.finish()

        return self._submit(body, result, name=name)

    def _sum_here(self, code, op, tensors) -> Optional[str]:
        """Why the agent cannot sum these (None: it can)."""
        if code is None:
            if not any(op == same for same in _GLOO_SAME):
                raise errors.UnsupportedError(f"inagg: op {_op_name(op)} is not supported (inagg: SUM, AVG; gloo: "
                                              "MIN, MAX, PRODUCT, BAND, BOR, BXOR)")
            return f"op {_op_name(op)}: {_AGENT_OPS}"
        other = sorted({str(t.dtype) for t in tensors if t.dtype not in INAGG_DTYPES})
        if other:
            return f"dtype {', '.join(other)}: inagg sums float32, float16, bfloat16, int32"
        return bytes_reason(tensors)

    # --- checks before anything is sent ---------------------------------------------------------------------------

    def _check_count(self, name: str, outputs, inputs) -> None:
        if len(outputs) != len(inputs):
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {len(outputs)} outputs for "
                                       f"{len(inputs)} inputs")

    def _check_pair(self, name: str, output: torch.Tensor, input: torch.Tensor, want: int, out_name: str,
                    in_name: str = "input", scatter: bool = False) -> None:
        if output.dtype != input.dtype:
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {out_name} is {output.dtype}, {in_name} "
                                       f"{input.dtype} (they must be the same)")
        if output.device != input.device:
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {out_name} is on {output.device}, "
                                       f"{in_name} on {input.device}")
        if scatter:
            if input.numel() != output.numel() * self._size:
                raise errors.BadInputError(
                    f"inagg: {name} on rank {self._rank}: {in_name} has {input.numel()} elements {tuple(input.shape)}, "
                    f"{out_name} {output.numel()} {tuple(output.shape)} x world size {self._size} = "
                    f"{output.numel() * self._size}")
        elif output.numel() != want:
            what = (f"{in_name} {input.numel()} {tuple(input.shape)} x world size {self._size} = {want}"
                    if want != input.numel() else f"{in_name} {input.numel()} {tuple(input.shape)}")
            raise errors.BadInputError(f"inagg: {name} on rank {self._rank}: {out_name} has {output.numel()} elements "
                                       f"{tuple(output.shape)}, {what}")

    # --- everything else: gloo ------------------------------------------------------------------------------------

    def _to_gloo(self, name: str, call: Callable[[], dist.Work]) -> dist.Work:
        return self._fallback.run(name, "no inagg form", call)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return self._to_gloo("allgather_coalesced", lambda: self._gloo.allgather_coalesced(
            output_lists, input_list, opts or AllgatherOptions()))

    def gather(self, output_tensors, input_tensors, opts):
        return self._to_gloo("gather", lambda: self._gloo.gather(output_tensors, input_tensors, opts))

    def scatter(self, output_tensors, input_tensors, opts):
        return self._to_gloo("scatter", lambda: self._gloo.scatter(output_tensors, input_tensors, opts))

    def reduce(self, tensors, opts):
        return self._to_gloo("reduce", lambda: self._gloo.reduce(tensors, opts))

    def alltoall(self, output_tensors, input_tensors, opts):
        return self._to_gloo("alltoall", lambda: self._gloo.alltoall(output_tensors, input_tensors, opts))

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._to_gloo("alltoall_base", lambda: self._gloo.alltoall_base(
            output, input, output_split_sizes, input_split_sizes, opts))

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._to_gloo("all_to_all_single", lambda: self._gloo.alltoall_base(
            output, input, output_split_sizes, input_split_sizes, opts))

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        return self._to_gloo("monitored_barrier", lambda: self._gloo.monitored_barrier(timeout, wait_all_ranks))

    def send(self, tensors, dst_rank, tag):
        return self._to_gloo("send", lambda: self._gloo.send(tensors, dst_rank, tag))

    def recv(self, tensors, src_rank, tag):
        return self._to_gloo("recv", lambda: self._gloo.recv(tensors, src_rank, tag))

    def recv_anysource(self, tensors, tag):
        return self._to_gloo("recv_anysource", lambda: self._gloo.recv_anysource(tensors, tag))


def _sum_reason(op, code, dtypes) -> str:
    if code is None:
        return f"op {_op_name(op)}: {_AGENT_OPS}"
    other = sorted(str(d) for d in dtypes if d not in INAGG_DTYPES)
    return f"dtype {', '.join(other)}: inagg sums float32, float16, bfloat16, int32"


_AGENT_OPS = "inagg reduces SUM, AVG, MIN and MAX"
_TORCH_OP = {p.OP_SUM: dist.ReduceOp.SUM, p.OP_AVG: dist.ReduceOp.AVG, p.OP_MIN: dist.ReduceOp.MIN,
             p.OP_MAX: dist.ReduceOp.MAX}


def _spans(total: int, capacity: int) -> Iterator[tuple]:
    """Rounds of at most ``capacity`` over ``total`` (at least one, maybe empty): (start, length, no parts)."""
    at = 0
    while True:
        length = min(capacity, total - at)
        yield at, length, (0, 0)
        at += length
        if at >= total:
            return


def _part_spans(total: int, capacity: int, part: int) -> Iterator[tuple]:
    """Rounds over ``total`` (the ranks' parts of ``part`` each, end to end) that hold whole parts, as many as fit in
    ``capacity``, or pieces of one part when a part is larger: (start, length, (part size in the round, first part's
    rank)). No parts (an empty tensor): one empty round without parts."""
    if part == 0:
        yield 0, 0, (0, 0)
        return
    if part <= capacity:
        step = capacity // part * part
        for at in range(0, total, step):
            length = min(step, total - at)
            yield at, length, (part, at // part)
        return
    for rank in range(total // part):
        for piece in range(0, part, capacity):
            length = min(capacity, part - piece)
            yield rank * part + piece, length, (length, rank)


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
