"""One rank of a multi-process test: ``python _ranks.py SCENARIO[,SCENARIO...]`` under torchrun or with RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT set by the test. Each scenario checks inagg's answers against gloo's (a gloo group of the same
ranks) or the exact answer; each scenario and case reports its outcome (:func:`report`: into INAGG_TEST_REPORT, which
the tests read); the rank prints ``RANK n OK`` and exits 0 at the end; a failed check raises, which exits non-zero."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

import inagg_torch

# Relative tolerance of one float sum against another: float32 sums in a different order, and for 16-bit types one
# rounding of the float32 sum versus gloo's rounding after every addition.
RTOL = {torch.float32: 1e-5, torch.bfloat16: 2 ** -6, torch.float16: 2 ** -9, torch.int32: 0}


def inputs(rank: int, n: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    if dtype == torch.int32:
        return torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32)
    return (torch.randn(n, generator=g) * 3).to(dtype)


def exact(world: int, n: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    return sum(inputs(r, n, dtype, seed).double() for r in range(world))


def check_close(name: str, got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype, scale: float = 1.0) -> None:
    got = got.double()
    want = want.double()
    if dtype == torch.int32:
        assert torch.equal(got, want), f"{name}: int32 differs: {got[:8]} vs {want[:8]}"
        return
    bound = RTOL[dtype] * (want.abs() + scale) * 2
    err = (got - want).abs()
    assert bool((err <= bound).all()), f"{name}: max error {err.max().item()} over bound (first {got[:4]} vs {want[:4]})"


def scenario_async(rank: int, world: int, gloo) -> None:
    """async_op=True: Works whose futures complete with the result in the tensor, in submission order."""
    tensors = [inputs(rank, 20_000 + i, torch.float32, seed=i) for i in range(6)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    futures = [w.get_future() for w in works]
    for i, (w, f) in enumerate(zip(works, futures)):
        value = f.wait()
        assert value[0] is tensors[i] or torch.equal(value[0], tensors[i])
        assert w.is_completed()
        check_close(f"async {i}", tensors[i], exact(world, 20_000 + i, torch.float32, seed=i), torch.float32)
    # Synchronous calls between asynchronous ones, waited out of order: a synchronous call runs on the caller's thread
    # only when every earlier collective finished, so none overtakes another (each has another size: an overtaking
    # one would meet a different tensor on the other ranks and fail).
    mixed = [inputs(rank, 30_000 + i, torch.float32, seed=20 + i) for i in range(4)]
    first = dist.all_reduce(mixed[0], async_op=True)
    dist.all_reduce(mixed[1])
    third = dist.all_reduce(mixed[2], async_op=True)
    dist.all_reduce(mixed[3])
    third.wait()
    first.wait()
    for i, t in enumerate(mixed):
        check_close(f"mixed {i}", t, exact(world, 30_000 + i, torch.float32, seed=20 + i), torch.float32)
    # A future chained with then() sees the result.
    t = inputs(rank, 10, torch.float32, seed=9)
    chained = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    check_close("then", chained.wait(), exact(world, 10, torch.float32, seed=9) * 2, torch.float32)


def scenario_coalesced(rank: int, world: int, gloo) -> None:
    """allreduce_coalesced (DDP's buckets): several tensors and dtypes in one call, larger than a round."""
    pg = dist.distributed_c10d._get_default_group()
    sizes = [(5, torch.float32), (40_000, torch.float32), (7, torch.int32), (30_000, torch.bfloat16), (1, torch.float16)]
    ts = [inputs(rank, n, d, seed=i) for i, (n, d) in enumerate(sizes)]
    opts = dist.AllreduceCoalescedOptions()
    opts.reduceOp = dist.ReduceOp.SUM
    pg.allreduce_coalesced(ts, opts).wait()
    for i, ((n, d), t) in enumerate(zip(sizes, ts)):
        check_close(f"coalesced {i}", t, exact(world, n, d, seed=i), d)


def scenario_collectives(rank: int, world: int, gloo) -> None:
    """The collectives inagg hands to its gloo group, and the fallbacks (ops and dtypes) with gloo's result."""
    t = torch.full((4,), float(rank))
    dist.broadcast(t, src=world - 1)
    assert torch.equal(t, torch.full((4,), float(world - 1)))
    dist.barrier()
    out = [torch.zeros(3) for _ in range(world)]
    dist.all_gather(out, torch.full((3,), float(rank)))
    assert all(torch.equal(o, torch.full((3,), float(r))) for r, o in enumerate(out))
    flat = torch.zeros(3 * world)
    dist.all_gather_into_tensor(flat, torch.full((3,), float(rank)))
    assert torch.equal(flat, torch.arange(world).repeat_interleave(3).float())
    rs = torch.zeros(2)
    dist.reduce_scatter(rs, [torch.full((2,), float(rank + r)) for r in range(world)])
    assert torch.equal(rs, torch.full((2,), float(sum(q + rank for q in range(world)))))
    if world >= 2:
        if rank == 0:
            dist.send(torch.arange(5.0), dst=1)
        elif rank == 1:
            got = torch.zeros(5)
            dist.recv(got, src=0)
            assert torch.equal(got, torch.arange(5.0))
    m = torch.tensor([float(rank), -float(rank)])
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    assert torch.equal(m, torch.tensor([float(world - 1), 0.0]))
    d = inputs(rank, 100, torch.float32).double()
    dist.all_reduce(d)
    assert d.dtype == torch.float64
    check_close("float64 via gloo", d, exact(world, 100, torch.float32), torch.float32)
    a = torch.ones(3, dtype=torch.float64) * (rank + 1)
    dist.all_reduce(a, op=dist.ReduceOp.AVG)
    assert torch.allclose(a, torch.full((3,), (world + 1) / 2, dtype=torch.float64))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return self.body(x)


def _train(ddp: nn.Module, rank: int, steps: int) -> torch.Tensor:
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(steps):
        x = torch.randn(32, 64, generator=g)
        y = torch.randint(0, 10, (32,), generator=g)
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    return torch.cat([q.detach().reshape(-1) for q in ddp.parameters()])


def scenario_ddp(rank: int, world: int, gloo) -> None:
    """DDP on the inagg group and on the gloo group, same seeds: the same parameters after a few steps (float32
    sums in another order: tiny differences)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    a = _train(DDP(Net(), bucket_cap_mb=0.01), rank, 5)  # small buckets: several coalesced all-reduces a step
    torch.manual_seed(0)
    b = _train(DDP(Net(), process_group=gloo), rank, 5)
    err = (a - b).abs().max().item()
    assert err < 1e-4, f"DDP inagg vs gloo: max parameter difference {err}"


def scenario_hook(rank: int, world: int, gloo) -> None:
    """The comm hook on a gloo-DDP: same parameters as plain gloo-DDP."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    inagg_group = dist.distributed_c10d._get_default_group()
    torch.manual_seed(0)
    hooked = DDP(Net(), process_group=gloo)
    hooked.register_comm_hook(inagg_group, inagg_torch.hooks.allreduce_hook)
    a = _train(hooked, rank, 5)
    torch.manual_seed(0)
    b = _train(DDP(Net(), process_group=gloo), rank, 5)
    err = (a - b).abs().max().item()
    assert err < 1e-4, f"DDP with the inagg hook vs gloo: max parameter difference {err}"


def scenario_sizes_differ(rank: int, world: int, gloo) -> None:
    """Different sizes on different ranks: TensorMismatchError on every rank; the job goes on."""
    try:
        dist.all_reduce(torch.ones(100 + rank))
        raise AssertionError("no error for different sizes")
    except inagg_torch.TensorMismatchError as ex:
        assert "sizes differ" in str(ex), ex
    t = torch.ones(10)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((10,), float(world)))


def scenario_nan(rank: int, world: int, gloo) -> None:
    """NaN or infinity on one rank: NonFiniteError naming it on every rank; the job goes on."""
    t = torch.ones(1000)
    if rank == world - 1:
        t[500] = float("nan")
    try:
        dist.all_reduce(t)
        raise AssertionError("no error for NaN")
    except inagg_torch.NonFiniteError as ex:
        assert f"rank {world - 1}" in str(ex) and "NaN" in str(ex), ex
    t = torch.full((3,), 3.0e38)  # finite, but the sum overflows
    try:
        dist.all_reduce(t)
        raise AssertionError("no error for overflow")
    except inagg_torch.NonFiniteError as ex:
        assert "overflow" in str(ex), ex
    t = torch.ones(10)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((10,), float(world)))


def scenario_rank_dies(rank: int, world: int, gloo) -> None:
    """The last rank dies while the others wait in an all-reduce: they get RankFailedError quickly."""
    t = torch.ones(1000)
    dist.all_reduce(t)
    if rank == world - 1:
        time.sleep(1.0)
        os._exit(17)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        raise AssertionError("no error when a rank died")
    except inagg_torch.RankFailedError as ex:
        assert "disconnected" in str(ex) or "left" in str(ex), ex
    assert time.monotonic() - start < 20
    try:
        dist.all_reduce(t)
        raise AssertionError("the failed job accepted another all-reduce")
    except inagg_torch.InaggError:
        pass
    print(f"RANK {rank} OK", flush=True)
    os._exit(0)  # the process group's gloo peers are gone: skip its teardown


def scenario_rank_hangs(rank: int, world: int, gloo) -> None:
    """The last rank stays alive but stops calling: the others get RankFailedError naming it within
    INAGG_COLLECTIVE_TIMEOUT, not after the process group's 30 min; when it calls again, it gets the same error."""
    limit = float(os.environ["INAGG_COLLECTIVE_TIMEOUT"])
    t = torch.ones(1000)
    dist.all_reduce(t)
    if rank == world - 1:
        time.sleep(limit + 2)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        raise AssertionError("no error when a rank hung")
    except inagg_torch.RankFailedError as ex:
        waited = time.monotonic() - start
        assert f"all-reduce #2 of job" in str(ex) and f"local rank {world - 1} (rank {world - 1}, pid " in str(ex) \
            and f"did not submit it within the collective timeout of {limit:g} s" in str(ex), ex
        if rank != world - 1:
            assert limit * 0.9 <= waited < limit + 5, f"rank {rank} waited {waited:.2f} s for a {limit} s timeout"
    try:
        dist.all_reduce(t)
        raise AssertionError("the failed job accepted another all-reduce")
    except inagg_torch.RankFailedError as ex:
        assert "create a new process group" in str(ex), ex


def scenario_multihost(rank: int, world: int, gloo) -> None:
    """Two emulated hosts through the switch (the first half of the ranks on one): float32 within the fixed-point
    bound, int32 exact, AVG too; reduce-scatter, all-gather, broadcast, MIN and MAX through the switch's own packets."""
    half = world // 2
    n = 70_000
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        t = inputs(rank, n, dtype, seed=3)
        dist.all_reduce(t)
        want = exact(world, n, dtype, seed=3)
        if dtype == torch.int32:
            assert torch.equal(t.double(), want)
        else:
            # Block fixed point (docs/protocol.md): error <= W * 2^-(shift+1), shift = 31 - ceil(log2(W+1)) - E, with
            # 2^E above the block's largest host sum: with W = 2 hosts, below 2^-27 of the largest host sum; plus
            # the float32 rounding of the in-host sums and of the result (2^-22 in all), and of bfloat16 at the end.
            host_sum = max(sum(inputs(r, n, dtype, seed=3).double() for r in ranks).abs().max().item()
                           for ranks in (range(half), range(half, world)))
            err = (t.double() - want).abs()
            bound = host_sum * 2 ** -22 + (RTOL[dtype] * want.abs() * 2 if dtype != torch.float32 else 0)
            assert bool((err <= bound).all()), f"multi-host {dtype}: max error {err.max().item()}"
    t = torch.full((1000,), float(rank))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert torch.allclose(t, torch.full((1000,), (world - 1) / 2), atol=1e-4), t[:4]
    # The collectives that move bytes, as int32 sums through the switch: exact, bit for bit.
    x = inputs(rank, 20_000, torch.float32, seed=4)
    got, want = torch.zeros(world * 20_000), torch.zeros(world * 20_000)
    dist.all_gather_into_tensor(got, x)
    dist.all_gather_into_tensor(want, x, group=gloo)
    assert torch.equal(got, want), "multi-host all-gather differs from gloo's"
    b = inputs(rank, 9_000, torch.float32, seed=5).double()
    dist.broadcast(b, src=world - 1)
    assert torch.equal(b, inputs(world - 1, 9_000, torch.float32, seed=5).double()), "multi-host broadcast"
    r = torch.zeros(10_000, dtype=torch.int32)
    dist.reduce_scatter_tensor(r, inputs(rank, world * 10_000, torch.int32, seed=6))
    want = exact(world, world * 10_000, torch.int32, seed=6)[rank * 10_000:(rank + 1) * 10_000]
    assert torch.equal(r.double(), want), "multi-host int32 reduce-scatter"
    # Through the switch's REDUCE_SCATTER and ALL_GATHER (the ranks are laid out by host): parts smaller than a round
    # (many per round) and larger (several rounds per part); float32 within all_reduce's bound (above).
    for m in (37, 30_000):
        x = inputs(rank, world * m, torch.float32, seed=8)
        part = torch.zeros(m)
        dist.reduce_scatter_tensor(part, x)
        want = exact(world, world * m, torch.float32, seed=8)[rank * m:(rank + 1) * m]
        host_sum = max(sum(inputs(r, world * m, torch.float32, seed=8).double() for r in ranks).abs().max().item()
                       for ranks in (range(half), range(half, world)))
        err = (part.double() - want).abs().max().item()
        assert err <= host_sum * 2 ** -22, f"multi-host float32 reduce-scatter of {m}: max error {err}"
        got, want = torch.zeros(world * m), torch.zeros(world * m)
        dist.all_gather_into_tensor(got, x[:m])
        dist.all_gather_into_tensor(want, x[:m], group=gloo)
        assert torch.equal(got, want), f"multi-host all-gather of {m}"
    odd = inputs(rank, 7, torch.bfloat16, seed=9)  # 14 bytes per rank: not whole int32 words, the int32 sum's way
    got, want = torch.zeros(world * 7, dtype=torch.bfloat16), torch.zeros(world * 7, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(got, odd)
    dist.all_gather_into_tensor(want, odd, group=gloo)
    assert torch.equal(got, want), "multi-host bfloat16 all-gather of 7"
    for op in (dist.ReduceOp.MIN, dist.ReduceOp.MAX):  # the switch's MIN and MAX: exact
        for dtype in (torch.float32, torch.int32):
            t, g = inputs(rank, 5_000, dtype, seed=10), inputs(rank, 5_000, dtype, seed=10)
            dist.all_reduce(t, op=op)
            dist.all_reduce(g, op=op, group=gloo)
            assert torch.equal(t, g), f"multi-host {op} of {dtype}"
        part, want = torch.zeros(300), torch.zeros(300)
        x = inputs(rank, world * 300, torch.float32, seed=11)
        dist.reduce_scatter_tensor(part, x, op=op)
        dist.reduce_scatter_tensor(want, x, op=op, group=gloo)
        assert torch.equal(part, want), f"multi-host reduce-scatter {op}"


# --- collectives other than all_reduce (issue 25) --------------------------------------------------------------------

COLLECTIVE_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int32)
COLLECTIVE_OPS = ("SUM", "AVG", "MIN", "MAX")


def report(kind: str, name: str, outcome: str) -> None:
    """Records the outcome (``"OK"`` or the failure) of a case or scenario in this rank's report file, which the
    tests read (conftest.RankRun); prints it too, for whoever reads the output."""
    print(f"RANK {os.environ.get('RANK')} {kind.upper()} {name} {outcome}", flush=True)
    path = os.environ.get("INAGG_TEST_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"kind": kind, "name": name, "outcome": outcome}) + "\n")


def _failure(ex: BaseException) -> str:
    return f"FAILED: {type(ex).__name__}: {ex}"


def _case(rank: int, name: str, check) -> bool:
    """Runs one case; reports it OK or its failure and goes on with the next."""
    try:
        check()
    except Exception as ex:  # noqa: BLE001 - reported by name, the scenario fails at its end
        report("case", name, _failure(ex))
        return False
    report("case", name, "OK")
    return True


def _on_gloo_with_avg(gloo, op_name: str, call) -> None:
    """Runs ``call(op)`` on gloo; AVG as SUM (gloo has none): the caller divides."""
    call(dist.ReduceOp.SUM if op_name == "AVG" else getattr(dist.ReduceOp, op_name))


def _divide(t: torch.Tensor, world: int) -> torch.Tensor:
    if t.dtype == torch.int32:
        return torch.div(t, world, rounding_mode="trunc")
    return (t.double() / world).to(t.dtype)


def _all_reduce_case(rank: int, world: int, gloo, dtype: torch.dtype, op_name: str) -> None:
    """all_reduce of ``dtype`` with ``op_name``, from empty to several rounds, against gloo's answer (and against the
    exact sum for SUM and AVG; MIN and MAX run on the agent too on one host, exact). Every size is reduced before
    any is checked, so that a failed check leaves no collective unmatched on the other ranks."""
    op = getattr(dist.ReduceOp, op_name)
    results = []
    for n in (0, 1, 1000, 50_001):
        t = inputs(rank, n, dtype)
        g = inputs(rank, n, dtype)
        dist.all_reduce(t, op=op)
        _on_gloo_with_avg(gloo, op_name, lambda o: dist.all_reduce(g, op=o, group=gloo))
        results.append((n, t, g))
    for n, t, g in results:
        assert t.dtype == dtype and t.shape == (n,)
        if op_name in ("MIN", "MAX"):
            assert torch.equal(t, g), f"{dtype} {op_name} n={n} differs from gloo's"
            continue
        want = exact(world, n, dtype)
        if op_name == "AVG":  # gloo has no AVG: sum, then divide like torch does
            if dtype == torch.int32:
                g = torch.div(g, world, rounding_mode="trunc")
                want = torch.div(want, world, rounding_mode="trunc")
            else:
                g = g / world
                want = want / world
        check_close(f"{dtype} {op_name} n={n} vs exact", t, want, dtype)
        check_close(f"{dtype} {op_name} n={n} vs gloo", t, g, dtype, scale=4.0)


def scenario_tensor_collectives(rank: int, world: int, gloo) -> None:
    """Each collective x dtype (x op) against gloo's answer (against the exact sum where gloo lacks the dtype)."""
    ok = True
    for dtype in COLLECTIVE_DTYPES:
        for op_name in COLLECTIVE_OPS:
            ok &= _case(rank, f"all_reduce-{dtype}-{op_name}",
                        lambda dtype=dtype, op_name=op_name: _all_reduce_case(rank, world, gloo, dtype, op_name))

    def non_contiguous():
        m = inputs(rank, 300 * 7, torch.float32).reshape(300, 7).t()
        dist.all_reduce(m)
        check_close("non-contiguous", m, exact(world, 300 * 7, torch.float32).reshape(300, 7).t(), torch.float32)

    ok &= _case(rank, "all_reduce-non_contiguous", non_contiguous)
    n = 3000  # several agent rounds of the tests' 16 Ki-element slot once gathered
    for dtype in COLLECTIVE_DTYPES + (torch.float64, torch.int64, torch.bool):
        def gather(dtype=dtype):
            x = inputs(rank, n, torch.int32, seed=5).to(dtype)
            got = torch.full((world * n,), 7, dtype=dtype)
            dist.all_gather_into_tensor(got, x)
            want = torch.zeros(world * n, dtype=dtype)
            dist.all_gather_into_tensor(want, x, group=gloo)
            assert torch.equal(got, want), f"all_gather_into_tensor {dtype} differs"
            parts = [torch.zeros(n, dtype=dtype) for _ in range(world)]
            dist.all_gather(parts, x)
            assert torch.equal(torch.cat(parts), want), f"all_gather {dtype} differs"

        def broadcast(dtype=dtype):
            x = inputs(rank, n, torch.int32, seed=6).to(dtype).reshape(30, -1)
            y = x.clone()
            dist.broadcast(x, src=world - 1)
            dist.broadcast(y, src=world - 1, group=gloo)
            assert torch.equal(x, y), f"broadcast {dtype} differs"

        ok &= _case(rank, f"all_gather-{dtype}", gather)
        ok &= _case(rank, f"broadcast-{dtype}", broadcast)
    for dtype in COLLECTIVE_DTYPES:
        for op_name in COLLECTIVE_OPS:
            def reduce_scatter(dtype=dtype, op_name=op_name):
                op = getattr(dist.ReduceOp, op_name)
                x = inputs(rank, world * n, dtype, seed=7)
                before = x.clone()
                got = torch.zeros(n, dtype=dtype)
                dist.reduce_scatter_tensor(got, x, op=op)
                assert torch.equal(x, before), "the input changed"
                # gloo: float32 (and int32) against its reduce-scatter; 16-bit types against its float32 sum, rounded
                # once like inagg rounds (gloo's own 16-bit sum rounds at every addition).
                wide = dtype in (torch.bfloat16, torch.float16)
                want = torch.zeros(n, dtype=torch.float32 if wide else dtype)
                _on_gloo_with_avg(gloo, op_name, lambda o: dist.reduce_scatter_tensor(
                    want, x.float() if wide else x, op=o, group=gloo))
                if op_name == "AVG":
                    want = _divide(want, world)
                want = want.to(dtype)
                if op_name in ("MIN", "MAX"):
                    assert torch.equal(got, want), f"{op_name} differs"
                else:
                    check_close(f"reduce_scatter {dtype} {op_name}", got, want, dtype, scale=4.0)

            ok &= _case(rank, f"reduce_scatter-{dtype}-{op_name}", reduce_scatter)

    def coalesced():
        pg = dist.distributed_c10d._get_default_group()
        xs = [inputs(rank, 10 + i, d, seed=i) for i, d in enumerate(COLLECTIVE_DTYPES)]
        outs = [torch.zeros(world * x.numel(), dtype=x.dtype) for x in xs]
        pg.allgather_into_tensor_coalesced(outs, xs).wait()
        for x, o in zip(xs, outs):
            want = torch.zeros_like(o)
            dist.all_gather_into_tensor(want, x, group=gloo)
            assert torch.equal(o, want), f"coalesced all-gather {x.dtype}"
        ys = [inputs(rank, world * (5 + i), d, seed=i) for i, d in enumerate(COLLECTIVE_DTYPES)]
        got = [torch.zeros(y.numel() // world, dtype=y.dtype) for y in ys]
        opts = dist.distributed_c10d.ReduceScatterOptions()
        opts.reduceOp = dist.ReduceOp.SUM
        pg.reduce_scatter_tensor_coalesced(got, ys, opts).wait()
        highest = [torch.zeros_like(g) for g in got]
        opts.reduceOp = dist.ReduceOp.MAX  # on the agent (one host)
        pg.reduce_scatter_tensor_coalesced(highest, ys, opts).wait()
        for y, h in zip(ys, highest):
            m = h.numel()
            parts = [torch.zeros_like(y) for _ in range(world)]
            dist.all_gather(parts, y, group=gloo)
            assert torch.equal(h, torch.stack(parts).amax(0)[rank * m:(rank + 1) * m]), f"coalesced MAX {y.dtype}"
        with dist._coalescing_manager(async_ops=True) as cm:  # what FSDP-like callers use: the *_single_coalesced form
            again = [torch.zeros_like(g) for g in got]
            for a, y in zip(again, ys):
                dist.reduce_scatter_tensor(a, y)
        cm.wait()
        for y, g, a in zip(ys, got, again):
            want = exact(world, y.numel(), y.dtype, seed=COLLECTIVE_DTYPES.index(y.dtype))
            m = g.numel()
            check_close(f"coalesced reduce-scatter {y.dtype}", g, want[rank * m:(rank + 1) * m], y.dtype)
            assert torch.equal(a, g), f"coalescing manager {y.dtype}"
        rs = torch.zeros(4)
        dist.reduce_scatter(rs, [torch.full((4,), float(rank + r)) for r in range(world)])
        assert torch.equal(rs, torch.full((4,), float(sum(q + rank for q in range(world)))))

    ok &= _case(rank, "coalesced", coalesced)

    def functional():
        """torch's functional collectives (what torch.compile and DTensor call) enter from C++: they reach this class's
        overrides too, and run on the agent (its rounds count them), not on the registered gloo backend."""
        import torch.distributed._functional_collectives as fc

        pg = dist.distributed_c10d._get_default_group()
        x = inputs(rank, 6, torch.float32, seed=8)
        for name, call, want in (
                ("all_reduce", lambda: fc.all_reduce(x, "sum", pg), exact(world, 6, torch.float32, seed=8)),
                ("all_gather", lambda: fc.all_gather_single(x, 0, pg),
                 torch.cat([inputs(r, 6, torch.float32, seed=8) for r in range(world)])),
                ("reduce_scatter", lambda: fc.reduce_scatter_single(x.repeat(world), "sum", 0, pg),
                 exact(world, 6, torch.float32, seed=8)),
                ("broadcast", lambda: fc.broadcast(x, 0, pg), inputs(0, 6, torch.float32, seed=8))):
            before = pg._client.sequence
            got = fc.wait_tensor(call())
            assert pg._client.sequence > before, f"functional {name} did not run on the agent"
            check_close(f"functional {name}", got, want, torch.float32)

    ok &= _case(rank, "functional", functional)

    def wait_timeout():
        t = torch.ones(10)
        if rank == world - 1:
            time.sleep(1.5)
        work = dist.all_reduce(t, async_op=True)
        if rank != world - 1:
            start = time.monotonic()
            try:
                work.wait(timeout=timedelta(seconds=0.3))
                raise AssertionError("wait(timeout) returned before the last rank called")
            except inagg_torch.WaitTimeoutError as ex:
                assert "allreduce" in str(ex) and "0.3 s" in str(ex), ex
            assert time.monotonic() - start < 1.2
        work.wait()
        assert torch.equal(t, torch.full((10,), float(world)))

    ok &= _case(rank, "wait_timeout", wait_timeout)
    assert ok, "a case failed (see above)"


def scenario_strict(rank: int, world: int, gloo) -> None:
    """INAGG_STRICT=1: what inagg carries works; what would fall back raises, naming the collective, before sending."""
    assert os.environ.get("INAGG_STRICT") == "1"
    x = torch.full((5,), float(rank))
    out = torch.zeros(5 * world)
    dist.all_gather_into_tensor(out, x)
    dist.broadcast(x, src=0)
    dist.barrier()
    rs = torch.zeros(5)
    dist.reduce_scatter_tensor(rs, out)
    assert torch.equal(rs, torch.full((5,), float(rank * world))), rs  # every rank gathered the same
    highest = torch.full((3,), float(rank))
    dist.all_reduce(highest, op=dist.ReduceOp.MAX)  # MIN and MAX run on the agent on one host
    assert torch.equal(highest, torch.full((3,), float(world - 1))), highest
    lowest = torch.zeros(2)
    dist.reduce_scatter_tensor(lowest, torch.arange(2.0 * world) + rank, op=dist.ReduceOp.MIN)
    assert torch.equal(lowest, torch.arange(2.0 * rank, 2.0 * rank + 2)), lowest
    for name, call in (("allreduce", lambda: dist.all_reduce(torch.ones(3), op=dist.ReduceOp.PRODUCT)),
                       ("reduce_scatter_single", lambda: dist.reduce_scatter_tensor(
                           torch.zeros(2, dtype=torch.float64), torch.ones(2 * world, dtype=torch.float64))),
                       ("all_to_all_single", lambda: dist.all_to_all_single(torch.zeros(world), torch.ones(world)))):
        try:
            call()
            raise AssertionError(f"{name} fell back under INAGG_STRICT=1")
        except inagg_torch.UnsupportedError as ex:
            assert f"{name} on rank {rank} would run on gloo" in str(ex) and "INAGG_STRICT=1" in str(ex), ex


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(24, 40), nn.ReLU(), nn.Linear(40, 33), nn.ReLU(), nn.Linear(33, 10))

    def forward(self, x):
        return self.layers(x)


_ON_GLOO: dict = {}


def _fsdp_on_gloo(gloo, rank: int, steps: int, dtype=None):
    """``_fsdp_train`` on the gloo group, once per process and dtype (the reference of both FSDP scenarios)."""
    from torch.distributed.device_mesh import DeviceMesh

    if (steps, dtype) not in _ON_GLOO:
        _ON_GLOO[steps, dtype] = _fsdp_train(DeviceMesh.from_group(gloo, "cpu"), rank, steps, dtype)
    return _ON_GLOO[steps, dtype]


def _fsdp_train(mesh, rank: int, steps: int, dtype=None):
    """A few steps of FSDP2 on ``mesh``; the full parameters (all-gathered) after them."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.manual_seed(0)
    model = MLP()
    policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=dtype) if dtype else MixedPrecisionPolicy()
    for layer in model.layers:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(200 + rank)
    for _ in range(steps):
        x = torch.randn(16, 24, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [(p.to_local().detach().clone(), p.full_tensor().detach().clone()) for p in model.parameters()]


def scenario_fsdp(rank: int, world: int, gloo) -> None:
    """FSDP2 (fully_shard) on the inagg group and on the gloo group, same seeds and data: the same parameters after a
    few steps (gradients summed in another order: float32 rounding apart); the all-gathered parameters are exactly
    the shards of every rank. Under INAGG_STRICT=1 (the test sets it) nothing of FSDP2 falls back to gloo."""
    from torch.distributed.device_mesh import DeviceMesh

    inagg_mesh = DeviceMesh.from_group(dist.distributed_c10d._get_default_group(), "cpu")
    for dtype in (None, torch.bfloat16):
        a = _fsdp_train(inagg_mesh, rank, 3, dtype)
        b = _fsdp_on_gloo(gloo, rank, 3, dtype)
        for i, ((shard_a, full_a), (shard_b, full_b)) in enumerate(zip(a, b)):
            err = (full_a - full_b).abs().max().item()
            assert err < (1e-5 if dtype is None else 2e-2), f"FSDP2 {dtype} parameter {i}: inagg vs gloo {err}"
            gathered = [torch.zeros_like(full_a) for _ in range(world)]
            dist.all_gather(gathered, full_a, group=gloo)
            assert all(torch.equal(x, full_a) for x in gathered), f"parameter {i}: ranks gathered different values"
            chunks = torch.chunk(full_a, world, dim=0)  # FSDP2 shards dim 0 as torch.chunk does
            mine = chunks[rank] if rank < len(chunks) else full_a[:0]
            assert torch.equal(mine, shard_a), f"parameter {i}: the gathered shard differs from this rank's"


def scenario_hsdp(rank: int, world: int, gloo) -> None:
    """HSDP on a 2-D DeviceMesh (replicate x shard, inagg subgroups made by init_device_mesh): the same parameters
    as FSDP2 on the gloo group (the same global batch)."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
    assert dist.get_backend(mesh.get_group("shard")) == dist.get_backend(mesh.get_group("replicate")) == "inagg"
    a = _fsdp_train(mesh, rank, 3)
    b = _fsdp_on_gloo(gloo, rank, 3)
    for i, ((_, full_a), (_, full_b)) in enumerate(zip(a, b)):
        err = (full_a - full_b).abs().max().item()
        assert err < 1e-5, f"HSDP parameter {i}: inagg vs gloo {err}"


def reserve_fails() -> None:
    """Rank 1 cannot reserve its shared memory: /dev/shm filled up between the agent's check of the free space (when
    the job's file was made) and this rank's ``posix_fallocate``, which answers ENOSPC. Filling /dev/shm for real
    would take the machine's memory, so the call answers ENOSPC here without reserving anything (the agent, the
    file and everything after the call are real). SharedMemoryFullError naming the cause on rank 1 when it joins;
    rank 0 gets RankFailedError naming local rank 1: at its first all-reduce when it joined first, from
    ``init_process_group`` when rank 1 had already given up (the agent ended the job then; CI once saw rank 0 handed
    that job's removed file instead)."""
    rank = int(os.environ["RANK"])
    if rank == 1:
        import errno

        real = os.posix_fallocate

        def full(fd: int, offset: int, length: int) -> None:
            if os.fstat(fd).st_size > offset:  # the job's file, not anything else this process reserves
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(fd, offset, length)

        os.posix_fallocate = full
        try:
            dist.init_process_group("inagg")
            raise AssertionError("rank 1 joined although it cannot reserve its shared memory")
        except inagg_torch.SharedMemoryFullError as ex:
            assert isinstance(ex, MemoryError)
            assert "rank 1 cannot reserve its 65536 bytes of shared memory in " in str(ex) \
                and "shared memory full: " in str(ex) and "has no room left" in str(ex), ex
    else:
        if os.environ.get("INAGG_TEST_JOIN_LATE"):
            from inagg_torch import _agent

            connect = _agent.connect_agent

            # Rank 1 cannot pass the store's rendezvous before rank 0 enters init_process_group: count jobs ended so.
            log = Path(os.environ["INAGG_TEST_JOIN_LATE"])
            ended = "(1 of 2 local ranks joined)"
            before = log.read_text(errors="replace").count(ended)

            def late(*args, **kwargs):  # past the store's rendezvous, before the hello: until rank 1 has given up
                deadline = time.monotonic() + 60
                while log.read_text(errors="replace").count(ended) == before:
                    assert time.monotonic() < deadline, f"rank 1's job never ended (agent log {log})"
                    time.sleep(0.05)
                return connect(*args, **kwargs)

            _agent.connect_agent = late
        try:
            dist.init_process_group("inagg")
            dist.all_reduce(torch.ones(10))
            raise AssertionError("rank 0 summed without rank 1")
        except inagg_torch.RankFailedError as ex:
            assert "local rank 1" in str(ex), ex
    print(f"RANK {rank} OK", flush=True)
    os._exit(0)  # rank 1 has no process group to tear down, so rank 0 skips its teardown too


def settings_differ() -> None:
    """The two emulated hosts' agents differ in a setting every host of a job must share (INAGG_TEST_SETTING: the
    agent's option, INAGG_TEST_VALUES: host 0's value, host 1's): every rank's ``init_process_group`` raises
    AgentSettingsMismatchError naming the option, both values and the hosts' ranks, before any tensor is sent. Without
    the check (the end below) the hosts' packets do not match at the switch: the multi-host scenario stalled until the
    agents' peer timeout (20 s in the test) and failed with SwitchStageError."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    option = os.environ["INAGG_TEST_SETTING"]
    first, second = os.environ["INAGG_TEST_VALUES"].split(",")
    half = world // 2
    start = time.monotonic()
    try:
        dist.init_process_group("inagg")
    except inagg_torch.AgentSettingsMismatchError as ex:
        waited = time.monotonic() - start
        message = str(ex)
        assert f"differ in {option}: {first} on host 0 'a' (ranks 0-{half - 1}); {second} on host 1 'b' (ranks " \
               f"{half}-{world - 1}). Every host's agent needs the same {option}" in message, message
        assert isinstance(ex, inagg_torch.AgentMismatchError)
        assert waited < 30, f"rank {rank} learnt it after {waited:.1f} s"
        print(f"RANK {rank} OK", flush=True)
        os._exit(0)  # no process group to tear down
    # Without the check: the hosts' packets do not match at the switch.
    scenario_multihost(rank, world, dist.new_group(backend="gloo"))
    raise AssertionError(f"rank {rank}: no error for hosts whose agents differ in {option}")


def main() -> None:
    scenario = sys.argv[1]
    if scenario == "reserve_fails":
        reserve_fails()
    if scenario == "settings_differ":
        settings_differ()
    dist.init_process_group("inagg")
    rank, world = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    for name in scenario.split(","):
        try:
            globals()[f"scenario_{name}"](rank, world, gloo)
        except Exception as ex:
            report("scenario", name, _failure(ex))
            raise
        dist.barrier(gloo)
        report("scenario", name, "OK")
    dist.destroy_process_group()
    print(f"RANK {rank} OK", flush=True)


if __name__ == "__main__":
    main()
