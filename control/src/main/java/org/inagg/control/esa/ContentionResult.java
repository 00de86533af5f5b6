package org.inagg.control.esa;

/**
 * @param policy              the allocation policy simulated
 * @param completionTicks     job completion time (finish minus arrival) of each job
 * @param fallbackBytes       bytes that went to a PS instead of being summed in the switch
 * @param preemptions         chunks preempted (ESA only)
 * @param slotUtilisation     average share of slots holding a chunk that is still aggregating
 */
public record ContentionResult(AllocationPolicy policy, long[] completionTicks, long fallbackBytes, long preemptions,
                               double slotUtilisation) {

    public ContentionResult {
        completionTicks = completionTicks.clone();
    }

    public double averageCompletionTicks() {
        double sum = 0;
        for (long ticks : completionTicks) {
            sum += ticks;
        }
        return sum / completionTicks.length;
    }
}
