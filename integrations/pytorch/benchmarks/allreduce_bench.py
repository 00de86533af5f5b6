"""all_reduce throughput, inagg vs gloo, same ranks, same run (docs/performance.md).

    torchrun --standalone --nproc-per-node 4 integrations/pytorch/benchmarks/allreduce_bench.py

Every rank is in two process groups: the default one (inagg) and a gloo group of the same ranks. For each size the
two take turns, a barrier before every call; the time of a call is the slowest rank's (max over ranks), and the
figure per size is the median over --iters calls after --warmup. Rank 0 prints a Markdown table and draws a PNG.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--min-log2", type=int, default=10, help="smallest size, 2^N elements (default 1 Ki)")
    p.add_argument("--max-log2", type=int, default=26, help="largest size, 2^N elements (default 64 Mi)")
    p.add_argument("--step", type=int, default=2, help="log2 step between sizes")
    p.add_argument("--iters", type=int, default=9)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "int32"])
    p.add_argument("--out", type=Path, default=Path("allreduce_bench"))
    args = p.parse_args()
    dist.init_process_group("inagg")
    rank, world = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    dtype = getattr(torch, args.dtype)
    rows = []
    for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
        n = 1 << log2
        tensor = torch.ones(n, dtype=dtype)
        iters = args.iters if n < (1 << 24) else max(3, args.iters // 3)
        timings = {}
        for name, group in (("inagg", None), ("gloo", gloo)):
            samples = []
            for i in range(args.warmup + iters):
                dist.barrier(gloo)
                start = time.perf_counter()
                dist.all_reduce(tensor, group=group)
                elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=gloo)
                if i >= args.warmup:
                    samples.append(elapsed.item())
                tensor.fill_(1)
            timings[name] = statistics.median(samples)
        row = {"elements": n, "inagg_s": timings["inagg"], "gloo_s": timings["gloo"]}
        rows.append(row)
        if rank == 0:
            print(f"{n:>10,d}  inagg {row['inagg_s'] * 1e3:9.3f} ms  gloo {row['gloo_s'] * 1e3:9.3f} ms  "
                  f"speed-up {row['gloo_s'] / row['inagg_s']:5.2f}x", flush=True)
    if rank == 0:
        report(rows, world, args)
    dist.destroy_process_group()


def report(rows, world: int, args) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "allreduce.json").write_text(json.dumps({"world_size": world, "dtype": args.dtype, "rows": rows},
                                                        indent=1))
    lines = [f"| elements | inagg ms | gloo ms | inagg elements/s | gloo elements/s | inagg / gloo |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = r["elements"]
        lines.append(f"| {n:,d} | {r['inagg_s'] * 1e3:.3f} | {r['gloo_s'] * 1e3:.3f} | {n / r['inagg_s']:.3g} | "
                     f"{n / r['gloo_s']:.3g} | {r['gloo_s'] / r['inagg_s']:.2f}x |")
    table = "\n".join(lines)
    (args.out / "allreduce.md").write_text(table + "\n")
    print(f"\n{world} ranks, {args.dtype}, median of the slowest rank's time per call\n\n{table}\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return
    n = [r["elements"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(n, [x / r["inagg_s"] for x, r in zip(n, rows)], "o-", label="inagg (agent, shared memory)")
    ax.plot(n, [x / r["gloo_s"] for x, r in zip(n, rows)], "s-", label="gloo (loopback TCP)")
    ax.set(xscale="log", yscale="log", xlabel="elements per all_reduce", ylabel="elements/s",
           title=f"all_reduce {args.dtype}, {world} ranks on one host")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "allreduce.png", dpi=110)
    print(f"figure: {args.out / 'allreduce.png'}")


if __name__ == "__main__":
    main()
