"""One rank of a multi-process test: ``python _ranks.py SCENARIO[,SCENARIO...]`` under torchrun or with RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT set by the test. Each scenario checks inagg's answers against gloo's (a gloo group of the same
ranks) or the exact answer, prints ``RANK n OK`` and exits 0; a failed check raises, which exits non-zero."""

from __future__ import annotations

import os
import sys
import time

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


def scenario_dtypes(rank: int, world: int, gloo) -> None:
    """Every dtype and op against gloo and the exact sum; sizes from empty to several rounds; non-contiguous."""
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32):
        for n in (0, 1, 1000, 50_001):
            want = exact(world, n, dtype)
            for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG):
                t = inputs(rank, n, dtype)
                g = inputs(rank, n, dtype)
                dist.all_reduce(t, op=op)
                dist.all_reduce(g, group=gloo)  # gloo has no AVG: sum, then divide like torch does
                w = want
                if op == dist.ReduceOp.AVG:
                    if dtype == torch.int32:
                        g = torch.div(g, world, rounding_mode="trunc")
                        w = torch.div(want, world, rounding_mode="trunc")
                    else:
                        g = g / world
                        w = want / world
                assert t.dtype == dtype and t.shape == (n,)
                check_close(f"{dtype} {op} n={n} vs exact", t, w, dtype)
                check_close(f"{dtype} {op} n={n} vs gloo", t, g, dtype, scale=4.0)
    m = inputs(rank, 300 * 7, torch.float32).reshape(300, 7).t()  # non-contiguous
    dist.all_reduce(m)
    check_close("non-contiguous", m, exact(world, 300 * 7, torch.float32).reshape(300, 7).t(), torch.float32)


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
    bound, int32 exact, AVG too."""
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


def reserve_fails() -> None:
    """Rank 1 cannot reserve its shared memory: /dev/shm filled up between the agent's check of the free space (when
    the job's file was made) and this rank's ``posix_fallocate``, which answers ENOSPC. Filling /dev/shm for real
    would take the machine's memory, so the call answers ENOSPC here without reserving anything (the agent, the
    file and everything after the call are real). SharedMemoryFullError naming the cause on rank 1 when it joins;
    rank 0 gets RankFailedError naming local rank 1 at its first all-reduce."""
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
        dist.init_process_group("inagg")
        try:
            dist.all_reduce(torch.ones(10))
            raise AssertionError("rank 0 summed without rank 1")
        except inagg_torch.RankFailedError as ex:
            assert "local rank 1" in str(ex), ex
    print(f"RANK {rank} OK", flush=True)
    os._exit(0)  # rank 1 has no process group to tear down, so rank 0 skips its teardown too


def main() -> None:
    scenario = sys.argv[1]
    if scenario == "reserve_fails":
        reserve_fails()
    dist.init_process_group("inagg")
    rank, world = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    for name in scenario.split(","):
        globals()[f"scenario_{name}"](rank, world, gloo)
        dist.barrier(gloo)
        print(f"RANK {rank} SCENARIO {name} OK", flush=True)
    dist.destroy_process_group()
    print(f"RANK {rank} OK", flush=True)


if __name__ == "__main__":
    main()
