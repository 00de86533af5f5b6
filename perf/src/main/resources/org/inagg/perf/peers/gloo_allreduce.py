"""One rank of a gloo all-reduce benchmark (torch.distributed), started W times by `inagg bench-peers`.

Environment: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torch's env:// rendezvous).
Arguments: ELEMENTS ITERATIONS WARMUP.
Prints `elements/s VALUE` (the slowest rank's time decides: a max-reduce of the elapsed time), `p50 ms VALUE` (the
median call, each call's time the slowest rank's), `cpu ms VALUE` (the CPU time of all ranks' processes over the timed
calls, summed, per call: time.process_time, every thread) and, once a fresh
tensor of rank + 1 summed to W(W+1)/2 on every rank, `result ok`, on rank 0.
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main() -> None:
    elements, iterations, warmup = (int(a) for a in sys.argv[1:4])
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://")
    rank = dist.get_rank()
    tensor = torch.full((elements,), float(rank + 1), dtype=torch.float32)
    for _ in range(warmup):
        dist.all_reduce(tensor)
    dist.barrier()
    calls = torch.zeros(iterations, dtype=torch.float64)
    cpu_start = time.process_time()
    start = time.perf_counter()
    for i in range(iterations):
        began = time.perf_counter()
        dist.all_reduce(tensor)
        calls[i] = time.perf_counter() - began
    elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
    cpu = torch.tensor([time.process_time() - cpu_start], dtype=torch.float64)
    dist.all_reduce(cpu)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    dist.all_reduce(calls, op=dist.ReduceOp.MAX)
    world = dist.get_world_size()
    check = torch.full((elements,), float(rank + 1), dtype=torch.float32)
    dist.all_reduce(check)
    wrong = torch.tensor([int((check != world * (world + 1) / 2).sum().item())], dtype=torch.int64)
    dist.all_reduce(wrong)
    if rank == 0:
        print(f"elements/s {elements * iterations / elapsed.item():.6e}", flush=True)
        print(f"p50 ms {torch.quantile(calls, 0.5).item() * 1e3:.3f}", flush=True)
        print(f"cpu ms {cpu.item() / iterations * 1e3:.3f}", flush=True)
        print("result ok" if wrong.item() == 0 else f"result WRONG in {wrong.item()} elements", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
