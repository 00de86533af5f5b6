"""Collective throughput, inagg vs gloo, same ranks, same run (docs/performance.md).

    torchrun --standalone --nproc-per-node 4 integrations/pytorch/benchmarks/allreduce_bench.py
    torchrun --standalone --nproc-per-node 4 integrations/pytorch/benchmarks/allreduce_bench.py \
        --collective reduce_scatter

--collective picks all_reduce (default), reduce_scatter (reduce_scatter_tensor: the size is the input's, each rank
keeps 1/world of it), all_gather (all_gather_into_tensor: the size is the output's, each rank gives 1/world of it) or
broadcast (from rank 0).

Every rank is in two process groups: the default one (inagg) and a gloo group of the same ranks. For each size the
two take turns, --repeats times, and each turn measures two figures:

* back-to-back: --iters calls in a row after a barrier; the slowest rank's time divided by the calls (how nccl-tests
  and the OSU benchmarks time a collective, and how DDP issues them: one after another, the ranks kept in step by the
  collectives themselves);
* after a barrier: one call right after a barrier, the slowest rank's time, median over --iters calls. This includes
  how far apart the ranks leave the barrier, which on a box with fewer cores than processes is milliseconds.

The figure per size is the median over the repeats. The agent is a JVM: before the sizes, both groups run --warmup-s
seconds of all-reduces so that its JIT has compiled the summing loops. The data starts at 2^-100 in every element and
grows by the world size per call, so it stays exact and finite; rank 0 checks the result of every turn. Rank 0 prints
a Markdown table and draws a PNG.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.distributed as dist

import inagg_torch  # noqa: F401

START = 2.0 ** -100


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--min-log2", type=int, default=10, help="smallest size, 2^N elements (default 1 Ki)")
    p.add_argument("--max-log2", type=int, default=26, help="largest size, 2^N elements (default 64 Mi)")
    p.add_argument("--step", type=int, default=2, help="log2 step between sizes")
    p.add_argument("--iters", type=int, default=12, help="calls per turn (a third from 16 Mi up, at least 3)")
    p.add_argument("--repeats", type=int, default=3, help="turns of each backend per size")
    p.add_argument("--warmup-s", type=float, default=5.0, help="seconds of all-reduces before measuring")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "int32"])
    p.add_argument("--collective", default="all_reduce", choices=sorted(COLLECTIVES))
    p.add_argument("--out", type=Path, default=None, help="folder of the report (default <collective>_bench)")
    args = p.parse_args()
    args.name = "allreduce" if args.collective == "all_reduce" else args.collective
    args.out = args.out or Path(f"{args.name}_bench")
    if args.iters > 40:
        p.error("--iters above 40 would grow the data past float32's range (it grows by the world size per call)")
    dist.init_process_group("inagg")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.collective in ("reduce_scatter", "all_gather") and (1 << args.min_log2) % world:
        p.error(f"--collective {args.collective}: 2^{args.min_log2} elements do not split into {world} equal parts")
    collective = COLLECTIVES[args.collective]
    gloo = dist.new_group(backend="gloo")
    dtype = getattr(torch, args.dtype)
    groups = (("inagg", None), ("gloo", gloo))
    warm_up(groups, dtype, args.warmup_s, gloo)
    rows = []
    for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
        n = 1 << log2
        tensor = collective.buffers(n, world, dtype)
        iters = args.iters if n < (1 << 24) else max(3, args.iters // 3)
        b2b = {name: [] for name, _ in groups}
        latency = {name: [] for name, _ in groups}
        for _ in range(args.repeats):
            for name, group in groups:
                collective.fill(tensor)
                dist.barrier(gloo)
                start = time.perf_counter()
                for _ in range(iters):
                    collective.call(tensor, group)
                b2b[name].append(slowest(time.perf_counter() - start, gloo) / iters)
                collective.check(tensor, world, iters, name, rank)
                samples = []
                for _ in range(iters):
                    collective.fill(tensor)
                    dist.barrier(gloo)
                    start = time.perf_counter()
                    collective.call(tensor, group)
                    samples.append(slowest(time.perf_counter() - start, gloo))
                latency[name].append(statistics.median(samples))
        row = {"elements": n}
        for name, _ in groups:
            row[f"{name}_s"] = statistics.median(b2b[name])
            row[f"{name}_latency_s"] = statistics.median(latency[name])
            row[f"{name}_b2b_all_s"] = b2b[name]
        rows.append(row)
        if rank == 0:
            print(f"{n:>10,d}  back-to-back inagg {row['inagg_s'] * 1e3:8.3f} ms  gloo {row['gloo_s'] * 1e3:8.3f} ms "
                  f"({row['gloo_s'] / row['inagg_s']:5.2f}x)   after a barrier inagg "
                  f"{row['inagg_latency_s'] * 1e3:8.3f} ms  gloo {row['gloo_latency_s'] * 1e3:8.3f} ms "
                  f"({row['gloo_latency_s'] / row['inagg_latency_s']:5.2f}x)", flush=True)
    if rank == 0:
        report(rows, world, args)
    dist.destroy_process_group()


def fill(tensor: torch.Tensor) -> None:
    tensor.fill_(1 if not tensor.is_floating_point() else START)


def slowest(seconds: float, gloo) -> float:
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=gloo)
    return t.item()


def check(tensor: torch.Tensor, world: int, calls: int, name: str, rank: int) -> None:
    """Every element is START * world^calls (ints wrap the same way on both backends)."""
    if tensor.is_floating_point():
        want = torch.tensor(START, dtype=torch.float64) * float(world) ** calls
    else:
        want = torch.tensor((world ** calls + 2 ** 31) % 2 ** 32 - 2 ** 31, dtype=torch.int32)  # int32 wraps
    got = tensor[:: max(1, tensor.numel() // 4096)].to(torch.float64)
    if not torch.all(got == want.to(torch.float64)):
        raise SystemExit(f"rank {rank}: {name} all_reduce gave {got[:4].tolist()}, expected {want.item()}")


class AllReduce:
    """all_reduce in place: the data grows by the world size per call (check above)."""

    @staticmethod
    def buffers(n: int, world: int, dtype):
        return torch.empty(n, dtype=dtype)

    fill = staticmethod(fill)
    check = staticmethod(check)

    @staticmethod
    def call(tensor, group) -> None:
        dist.all_reduce(tensor, group=group)


class ReduceScatter:
    """reduce_scatter_tensor of an n-element input into n/world: every output element is START * world (int: world)."""

    @staticmethod
    def buffers(n: int, world: int, dtype):
        return torch.empty(n, dtype=dtype), torch.empty(n // world, dtype=dtype)

    @staticmethod
    def fill(pair) -> None:
        fill(pair[0])
        pair[1].zero_()

    @staticmethod
    def check(pair, world: int, calls: int, name: str, rank: int) -> None:
        check(pair[1], world, 1, name + " reduce_scatter", rank)

    @staticmethod
    def call(pair, group) -> None:
        dist.reduce_scatter_tensor(pair[1], pair[0], group=group)


class AllGather:
    """all_gather_into_tensor of n/world elements per rank into n: every rank gives rank + 1, in its place."""

    @staticmethod
    def buffers(n: int, world: int, dtype):
        return torch.empty(n // world, dtype=dtype), torch.empty(n, dtype=dtype)

    @staticmethod
    def fill(pair) -> None:
        pair[0].fill_(dist.get_rank() + 1)
        pair[1].zero_()

    @staticmethod
    def check(pair, world: int, calls: int, name: str, rank: int) -> None:
        want = torch.arange(1, world + 1, dtype=torch.float64).repeat_interleave(pair[0].numel())
        if not torch.equal(pair[1].to(torch.float64), want):
            raise SystemExit(f"rank {rank}: {name} all_gather_into_tensor gave a wrong tensor")

    @staticmethod
    def call(pair, group) -> None:
        dist.all_gather_into_tensor(pair[1], pair[0], group=group)


class Broadcast:
    """broadcast from rank 0, which holds 7 everywhere; the others start at 0."""

    @staticmethod
    def buffers(n: int, world: int, dtype):
        return torch.empty(n, dtype=dtype)

    @staticmethod
    def fill(tensor) -> None:
        tensor.fill_(7 if dist.get_rank() == 0 else 0)

    @staticmethod
    def check(tensor, world: int, calls: int, name: str, rank: int) -> None:
        if not torch.all(tensor == 7):
            raise SystemExit(f"rank {rank}: {name} broadcast gave a wrong tensor")

    @staticmethod
    def call(tensor, group) -> None:
        dist.broadcast(tensor, 0, group=group)


COLLECTIVES = {"all_reduce": AllReduce, "reduce_scatter": ReduceScatter, "all_gather": AllGather,
               "broadcast": Broadcast}


def warm_up(groups, dtype, seconds: float, gloo) -> None:
    tensor = torch.empty(1 << 20, dtype=dtype)
    deadline = time.monotonic() + seconds
    go = torch.ones(1)
    while go.item() > 0:
        for _, group in groups:
            for _ in range(4):
                fill(tensor)
                dist.all_reduce(tensor, group=group)
        go.fill_(1 if time.monotonic() < deadline else 0)
        dist.all_reduce(go, op=dist.ReduceOp.MIN, group=gloo)


def report(rows, world: int, args) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps({"world_size": world, "dtype": args.dtype,
                                                         "collective": args.collective,
                                                         "repeats": args.repeats, "rows": rows}, indent=1))
    lines = ["| elements | back-to-back: inagg ms | gloo ms | inagg elements/s | gloo elements/s | inagg / gloo "
             "| after a barrier: inagg ms | gloo ms | inagg / gloo |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = r["elements"]
        lines.append(f"| {n:,d} | {r['inagg_s'] * 1e3:.3f} | {r['gloo_s'] * 1e3:.3f} | {n / r['inagg_s']:.3g} | "
                     f"{n / r['gloo_s']:.3g} | {r['gloo_s'] / r['inagg_s']:.2f}x | "
                     f"{r['inagg_latency_s'] * 1e3:.3f} | {r['gloo_latency_s'] * 1e3:.3f} | "
                     f"{r['gloo_latency_s'] / r['inagg_latency_s']:.2f}x |")
    table = "\n".join(lines)
    (args.out / f"{args.name}.md").write_text(table + "\n")
    print(f"\n{args.collective}, {world} ranks, {args.dtype}, slowest rank, median of {args.repeats} turns\n\n{table}\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return
    n = [r["elements"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, key, title in ((axes[0], "s", "back-to-back"), (axes[1], "latency_s", "one call after a barrier")):
        ax.plot(n, [x / r[f"inagg_{key}"] for x, r in zip(n, rows)], "o-", label="inagg (agent, shared memory)")
        ax.plot(n, [x / r[f"gloo_{key}"] for x, r in zip(n, rows)], "s-", label="gloo (loopback TCP)")
        ax.set(xscale="log", yscale="log", xlabel=f"elements per {args.collective}", title=title)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("elements/s")
    axes[0].legend()
    fig.suptitle(f"{args.collective} {args.dtype}, {world} ranks on one host")
    fig.tight_layout()
    fig.savefig(args.out / f"{args.name}.png", dpi=110)
    print(f"figure: {args.out / f'{args.name}.png'}")


if __name__ == "__main__":
    main()
