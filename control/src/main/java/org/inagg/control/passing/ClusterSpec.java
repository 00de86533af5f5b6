package org.inagg.control.passing;

/**
 * @param hosts                 multi-GPU hosts
 * @param gpusPerHost           GPUs in each host
 * @param inHostGBps            in-host GPU-to-GPU bandwidth, GB/s (NVLink class: 300)
 * @param nicGbps               host NIC, Gb/s, full duplex
 * @param switchAggregationGbps what the switch can sum, Gb/s of input over all ports
 */
public record ClusterSpec(int hosts, int gpusPerHost, double inHostGBps, double nicGbps,
                          double switchAggregationGbps) {

    public ClusterSpec {
        if (hosts < 2 || gpusPerHost < 1 || !(inHostGBps > 0) || !(nicGbps > 0) || !(switchAggregationGbps > 0)) {
            throw new IllegalArgumentException("cluster parameters must be positive, at least two hosts");
        }
    }

    /** The setting the issue asks for: 300 GB/s in host, 100 Gb/s NICs; 4 hosts of 8 GPUs, a 6.4 Tb/s switch. */
    public static ClusterSpec paperLike() {
        return new ClusterSpec(4, 8, 300, 100, 6400);
    }
}
