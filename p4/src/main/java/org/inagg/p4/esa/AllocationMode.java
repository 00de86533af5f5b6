package org.inagg.p4.esa;

/** How the shared aggregator pool is handed out. */
public enum AllocationMode
{
    /**
     * ESA: an aggregator is freed the moment its sum is multicast (a copy goes to the parameter server for
     * retransmissions), and a packet of a higher-priority job takes an aggregator held by a lower-priority partial sum,
     * which goes to the parameter server with its bitmap.
     */
    PREEMPTIVE,
    /**
     * ATP: first come, first served, no preemption; a complete aggregator's sum goes to the parameter server and the
     * aggregator stays held until the server's result (the acknowledgement) comes back through the switch, which
     * multicasts it to the workers.
     */
    DEALLOCATE_ON_ACK
}
