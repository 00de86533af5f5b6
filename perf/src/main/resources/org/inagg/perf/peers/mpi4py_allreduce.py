"""One rank of an MPI_Allreduce benchmark through mpi4py, for machines with mpirun but no mpicc.
Arguments: ELEMENTS ITERATIONS WARMUP. Rank 0 prints `elements/s VALUE` (the slowest rank's time decides), `p50 ms VALUE`
(the median call, each call's time the slowest rank's), `cpu ms VALUE` (all ranks' process CPU time over the timed calls,
summed, per call) and, once a
fresh tensor of rank + 1 summed to W(W+1)/2 on every rank, `result ok`."""
import sys
import time

import numpy as np
from mpi4py import MPI


def main() -> None:
    elements, iterations, warmup = (int(a) for a in sys.argv[1:4])
    comm = MPI.COMM_WORLD
    tensor = np.full(elements, float(comm.Get_rank() + 1), dtype=np.float32)
    for _ in range(warmup):
        comm.Allreduce(MPI.IN_PLACE, tensor, op=MPI.SUM)
    comm.Barrier()
    calls = np.zeros(iterations, dtype=np.float64)
    cpu_start = time.process_time()
    start = MPI.Wtime()
    for i in range(iterations):
        began = MPI.Wtime()
        comm.Allreduce(MPI.IN_PLACE, tensor, op=MPI.SUM)
        calls[i] = MPI.Wtime() - began
    elapsed = MPI.Wtime() - start
    cpu_spent = time.process_time() - cpu_start
    slowest = comm.reduce(elapsed, op=MPI.MAX, root=0)
    cpu = comm.reduce(cpu_spent, op=MPI.SUM, root=0)
    comm.Allreduce(MPI.IN_PLACE, calls, op=MPI.MAX)
    world = comm.Get_size()
    check = np.full(elements, float(comm.Get_rank() + 1), dtype=np.float32)
    comm.Allreduce(MPI.IN_PLACE, check, op=MPI.SUM)
    wrong = comm.reduce(int(np.count_nonzero(check != world * (world + 1) / 2)), op=MPI.SUM, root=0)
    if comm.Get_rank() == 0:
        print(f"elements/s {elements * iterations / slowest:.6e}", flush=True)
        print(f"p50 ms {float(np.median(calls)) * 1e3:.3f}", flush=True)
        print(f"cpu ms {cpu / iterations * 1e3:.3f}", flush=True)
        print("result ok" if wrong == 0 else f"result WRONG in {wrong} elements", flush=True)


if __name__ == "__main__":
    main()
