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
 * @param joinCredential     the secret this worker's JOINs show (the controller's answer to its registration), or
 *                           {@link org.inagg.wire.InaggHeader#NO_CREDENTIAL} for a job installed without one.
 * @param congestionControl  whether a loss by order halves the worker's window of slots in flight (AIMD,
 *                           {@code CongestionWindow}); off by default: the window is the job's pool (SwitchML), since
 *                           a worker cannot tell its own loss from another worker's (docs/protocol.md).
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
    int receiveBurst,
    long joinCredential,
    boolean congestionControl)
{
    /** Settings of a worker whose JOINs show no credential. */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public WorkerSettings(
        final int jobId, final int workerId, final int workers, final int switchPeer, final int priority,
        final long retransmitTimeoutNs, final long peerTimeoutNs, final long joinRetryNs, final int receiveBurst)
    {
        this(jobId, workerId, workers, switchPeer, priority, retransmitTimeoutNs, peerTimeoutNs, joinRetryNs,
            receiveBurst, org.inagg.wire.InaggHeader.NO_CREDENTIAL, false);
    }

    /** These settings with JOINs showing {@code credential}. */
    public WorkerSettings withJoinCredential(final long credential)
    {
        return new WorkerSettings(jobId, workerId, workers, switchPeer, priority, retransmitTimeoutNs, peerTimeoutNs,
            joinRetryNs, receiveBurst, credential, congestionControl);
    }

    /** These settings with the congestion window cut on losses or not. */
    public WorkerSettings withCongestionControl(final boolean on)
    {
        return new WorkerSettings(jobId, workerId, workers, switchPeer, priority, retransmitTimeoutNs, peerTimeoutNs,
            joinRetryNs, receiveBurst, joinCredential, on);
    }

    @Override
    public String toString()
    {
        // The credential is a secret: never in a log line or an exception.
        return "WorkerSettings[jobId=" + jobId + ", workerId=" + workerId + ", workers=" + workers + ", switchPeer="
            + switchPeer + ", priority=" + priority + ", retransmitTimeoutNs=" + retransmitTimeoutNs
            + ", peerTimeoutNs=" + peerTimeoutNs + ", joinRetryNs=" + joinRetryNs + ", receiveBurst=" + receiveBurst
            + ", joinCredential=" + (joinCredential == org.inagg.wire.InaggHeader.NO_CREDENTIAL ? "none" : "set")
            + ", congestionControl=" + congestionControl + "]";
    }
}
