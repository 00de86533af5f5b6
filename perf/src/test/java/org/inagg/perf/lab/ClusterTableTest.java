package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.inagg.perf.peers.PeerResult;
import org.junit.jupiter.api.Test;

/** The emulated cluster's table: time, bound, ratio to gloo and the CPU per all-reduce where a peer reported it. */
class ClusterTableTest
{
    private static final long BYTES = 4L << 20;
    private static final LinkRate GBIT = LinkRate.parse("1gbit");

    @Test
    void shouldShowEachPeersCpuPerAllReduceInItsLastColumn()
    {
        // 1 Mi float32 at 5e6 elements/s: 209.7 ms per all-reduce; gloo's CPU 150 ms, inagg's unknown, MPI failed.
        final ClusterTable table = new ClusterTable(List.of(
            new ClusterBench.Row(PeerResult.measured("gloo", 4, 5.0e6, 0.2, "").withCpuSecondsPerOp(0.150), GBIT,
                BYTES, 0.1),
            new ClusterBench.Row(PeerResult.measured("inagg", 4, 1.0e7, 0.1, ""), GBIT, BYTES, 0.05),
            new ClusterBench.Row(PeerResult.failed("mpi", 4, "timeout"), GBIT, BYTES, 0.1)), "gloo");

        final String text = table.format("t");

        assertThat(text).containsPattern("(?m)^peer .* x gloo +cpu ms$")
            .containsPattern("(?m)^gloo +4 +1 Gbit/s +209\\.7 +200\\.0 +100\\.0 +0\\.48 +0\\.50 +1\\.00x +150\\.0$")
            .containsPattern("(?m)^inagg +4 +1 Gbit/s +104\\.9 +100\\.0 +50\\.0 +0\\.48 +0\\.50 +2\\.00x +-$")
            .containsPattern("(?m)^mpi +4 +1 Gbit/s +failed +- +100\\.0 +- +- +- +-$");
    }
}
