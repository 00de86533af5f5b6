package org.inagg.protocol;

/**
 * Validated settings of one worker of one job (built by {@code org.inagg.api.JobContext#conclude()}).
 *
 * @param jobId              job id, 0..65535.
 * @param workerId           this worker's id, 0..workers-1.
 * @param workers            workers in the job.
 * @param switchPeer         the transport's peer number of the switch.
 * @param priority           priority carried in every packet (switch memory scheduling).
 * @param retransmitTimeoutNs time without a result after which a packet is sent again.
 * @param peerTimeoutNs      time without any progress after which the operation fails.
 * @param joinRetryNs        interval between join attempts.
 * @param receiveBurst       most messages handled per duty cycle.
 */
public record WorkerSettings(
    int jobId,
    int workerId,
    int workers,
    int switchPeer,
    int priority,
    long retransmitTimeoutNs,
    long peerTimeoutNs,
    long joinRetryNs,
    int receiveBurst)
{
}
