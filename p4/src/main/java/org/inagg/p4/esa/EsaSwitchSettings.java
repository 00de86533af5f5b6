package org.inagg.p4.esa;

/**
 * Settings of an {@link EsaSwitch}.
 *
 * @param aggregators        aggregators in the shared pool.
 * @param maxWorkers         most workers of any job (bitmap width).
 * @param lanesPerAggregator lane registers per aggregator.
 * @param mode               ESA ({@link AllocationMode#PREEMPTIVE}) or ATP ({@link AllocationMode#DEALLOCATE_ON_ACK}).
 * @param policy             where effective priorities come from.
 * @param receiveBurst       messages polled per transport poll.
 */
public record EsaSwitchSettings(
    int aggregators, int maxWorkers, int lanesPerAggregator, AllocationMode mode, PriorityPolicy policy,
    int receiveBurst)
{
    public EsaSwitchSettings
    {
        if (aggregators < 1 || maxWorkers < 1 || lanesPerAggregator < 1 || receiveBurst < 1)
        {
            throw new IllegalArgumentException("aggregators, workers, lanes and burst must be positive");
        }
        if (mode == null || policy == null)
        {
            throw new IllegalArgumentException("mode and policy are required");
        }
    }
}
