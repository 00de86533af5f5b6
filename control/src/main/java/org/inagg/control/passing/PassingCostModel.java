package org.inagg.control.passing;

import java.util.EnumMap;
import java.util.Map;

/**
 * Communication time of one gradient synchronisation of {@code modelBytes} under each {@link SyncStrategy},
 * bandwidth terms only (latency is negligible at these sizes). With {@code N = hosts * G} GPUs, {@code M} the
 * gradient, {@code Bh} in-host and {@code Bn} NIC bandwidth, {@code A} switch aggregation throughput:
 * <pre>
 * flat ring          2 (N-1)/N * M / Bn                       every ring step crosses some host's NIC
 * hierarchical ring  2 (G-1)/G * M / Bh + 2 (H-1)/H * M / Bn
 * per-GPU INA        max(G * M / Bn, N * M / A)               G full gradients share each NIC
 * PASSING            2 (G-1)/G * M / Bh + max(M / Bn, H * M / A)
 * </pre>
 * In-host phases and the network phase are not overlapped (conservative for PASSING, which could pipeline them).
 */
public final class PassingCostModel {

    private PassingCostModel() {
    }

    public static double seconds(SyncStrategy strategy, ClusterSpec cluster, double modelBytes) {
        double gpus = (double) cluster.hosts() * cluster.gpusPerHost();
        double g = cluster.gpusPerHost();
        double h = cluster.hosts();
        double inHost = cluster.inHostGBps() * 1e9;
        double nic = cluster.nicGbps() * 1e9 / 8;
        double switchRate = cluster.switchAggregationGbps() * 1e9 / 8;
        double inHostPhases = 2 * (g - 1) / g * modelBytes / inHost;
        return switch (strategy) {
            case FLAT_RING -> 2 * (gpus - 1) / gpus * modelBytes / nic;
            case HIERARCHICAL_RING -> inHostPhases + 2 * (h - 1) / h * modelBytes / nic;
            case PER_GPU_INA -> Math.max(g * modelBytes / nic, gpus * modelBytes / switchRate);
            case PASSING -> inHostPhases + Math.max(modelBytes / nic, h * modelBytes / switchRate);
        };
    }

    public static Map<SyncStrategy, Double> all(ClusterSpec cluster, double modelBytes) {
        Map<SyncStrategy, Double> times = new EnumMap<>(SyncStrategy.class);
        for (SyncStrategy strategy : SyncStrategy.values()) {
            times.put(strategy, seconds(strategy, cluster, modelBytes));
        }
        return times;
    }

    /** Baseline time over PASSING time: how many times faster PASSING synchronises. */
    public static double speedup(SyncStrategy baseline, ClusterSpec cluster, double modelBytes) {
        return seconds(baseline, cluster, modelBytes) / seconds(SyncStrategy.PASSING, cluster, modelBytes);
    }

    /**
     * Training-throughput gain {@code (T_base - T_passing) / T_passing} of iterations that compute for
     * {@code computeSeconds} and then synchronise, the way "improves training performance by x%" is usually
     * measured (iterations per second); with zero compute it is {@code speedup - 1}.
     */
    public static double throughputGain(SyncStrategy baseline, ClusterSpec cluster, double modelBytes,
                                        double computeSeconds) {
        double base = computeSeconds + seconds(baseline, cluster, modelBytes);
        double passing = computeSeconds + seconds(SyncStrategy.PASSING, cluster, modelBytes);
        return (base - passing) / passing;
    }

    public static final double VGG19_BYTES = 548e6;
    public static final double RESNET50_BYTES = 98e6;
}
