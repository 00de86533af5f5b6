package org.inagg.perf.lab;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.inagg.perf.peers.FabricPlacement;
import org.inagg.perf.peers.Peer;
import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.PeerRun;

/**
 * Every peer on an emulated cluster, beside its bound: for each host count and link rate a fresh cluster
 * ({@link EmulatedCluster}) with one rank per host, each peer run on it in turn, and the least time the links allow
 * for that peer ({@link Peer#boundSeconds}). A peer that cannot run across hosts is recorded as skipped with the
 * reason; the cluster is removed after each host count and rate, whatever happened.
 */
public final class ClusterBench
{
    /**
     * One peer at one host count and link rate.
     *
     * @param result       what the peer measured (elements/s over the timed all-reduces).
     * @param rate         every link's rate.
     * @param boundSeconds the least time one all-reduce can take on those links.
     */
    public record Row(PeerResult result, LinkRate rate, long bytes, double boundSeconds)
    {
        /** Mean seconds per all-reduce, NaN when not measured. */
        public double seconds()
        {
            return result.isMeasured() ? bytes / 4.0 / result.elementsPerSecond() : Double.NaN;
        }

        /** bound / time: 1.0 is all the links allow. */
        public double ofBound()
        {
            return boundSeconds / seconds();
        }
    }

    private final List<Peer> peers;
    private final int mtu;
    private final int queueMs;
    private final int leaves;
    private final LinkRate uplink;

    /** One switch, every host on it ({@link EmulatedCluster}). */
    public ClusterBench(final List<Peer> peers, final int mtu, final int queueMs)
    {
        this(peers, mtu, queueMs, 0, null);
    }

    /**
     * @param leaves 0 for one switch; else a leaf-spine fabric ({@link LeafSpineFabric}) of that many leaves.
     * @param uplink the fabric's leaf-to-spine rate; null for the host links' rate at each run.
     */
    public ClusterBench(final List<Peer> peers, final int mtu, final int queueMs, final int leaves,
        final LinkRate uplink)
    {
        this.peers = List.copyOf(peers);
        this.mtu = mtu;
        this.queueMs = queueMs;
        this.leaves = leaves;
        this.uplink = uplink;
    }

    /** Runs every peer at every host count and rate; {@code progress} is told each row as it comes. */
    public List<Row> run(final List<Integer> hostCounts, final List<LinkRate> rates, final int elements,
        final int iterations, final int warmup, final long timeoutS, final Path workDir, final Consumer<Row> progress)
        throws InterruptedException
    {
        final long bytes = 4L * elements;
        final List<Row> rows = new ArrayList<>();
        for (final int hosts : hostCounts)
        {
            for (final LinkRate rate : rates)
            {
                try (EmulatedNetwork network = leaves > 0 ? LeafSpineFabric.create(hosts, leaves, rate,
                    uplink == null ? rate : uplink, mtu, queueMs)
                    : EmulatedCluster.create(hosts, rate, Map.of(), mtu, queueMs))
                {
                    final PeerRun run = new PeerRun(hosts, elements, iterations, warmup, timeoutS, workDir,
                        network.placement());
                    for (final Peer peer : peers)
                    {
                        final double bound = network.placement() instanceof FabricPlacement fabric
                            ? peer.boundSeconds(hosts, bytes, fabric) : peer.boundSeconds(hosts, bytes,
                            rate.bitsPerSecond());
                        final Row row = new Row(runOne(peer, run, network.describe()), rate, bytes, bound);
                        rows.add(row);
                        progress.accept(row);
                    }
                }
            }
        }
        return rows;
    }

    private static PeerResult runOne(final Peer peer, final PeerRun run, final String where)
        throws InterruptedException
    {
        final String unavailable = peer.unavailableReason();
        if (unavailable != null)
        {
            return PeerResult.skipped(peer.name(), run.workers(), unavailable);
        }
        if (!peer.runsAcrossHosts())
        {
            return PeerResult.skipped(peer.name(), run.workers(), "runs on one host only (not across " + where + ")");
        }
        try
        {
            return peer.run(run);
        }
        catch (final RuntimeException ex)
        {
            return PeerResult.failed(peer.name(), run.workers(), String.valueOf(ex.getMessage()));
        }
    }
}
