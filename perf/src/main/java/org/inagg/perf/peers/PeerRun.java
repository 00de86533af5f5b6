package org.inagg.perf.peers;

import java.nio.file.Path;

/**
 * One measurement asked of a peer: the same for every peer of a {@code bench-peers} run.
 *
 * @param workers    ranks (processes) in the all-reduce.
 * @param elements   float32 elements per tensor.
 * @param iterations timed all-reduces.
 * @param warmup     untimed all-reduces before them (where the peer can skip timing them).
 * @param timeoutS   seconds after which the peer's processes are killed and the run counted as failed.
 * @param workDir    a folder for logs and compiled helpers.
 * @param placement  where the ranks and the switch run: this machine's loopback, or the hosts of an emulated cluster.
 */
public record PeerRun(int workers, int elements, int iterations, int warmup, long timeoutS, Path workDir,
    Placement placement)
{
    /** On this machine's loopback interface. */
    public PeerRun(final int workers, final int elements, final int iterations, final int warmup, final long timeoutS,
        final Path workDir)
    {
        this(workers, elements, iterations, warmup, timeoutS, workDir, Placement.LOOPBACK);
    }

    public PeerRun
    {
        if (workers < 1 || elements < 1 || iterations < 1 || warmup < 0 || timeoutS < 1)
        {
            throw new IllegalArgumentException("workers, elements, iterations and timeout must be positive and warmup"
                + " not negative: " + workers + ", " + elements + ", " + iterations + ", " + timeoutS + ", " + warmup);
        }
    }
}
