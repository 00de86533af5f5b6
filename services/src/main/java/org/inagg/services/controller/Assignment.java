package org.inagg.services.controller;

import java.net.InetSocketAddress;

/**
 * What the controller gives a registered rank once its job runs.
 *
 * @param registration the registration (and lease) id.
 * @param name         the job's name.
 * @param jobId        the job id for {@code JobContext.jobId}.
 * @param workerId     the worker id for {@code JobContext.workerId} (the rank).
 * @param world        the job's W.
 * @param switchAddress where to send the packets.
 * @param session      the job's session on the switch (the worker learns it again from its JOIN_ACK).
 * @param slots        the job's slots.
 * @param lanes        lanes per packet.
 * @param leaseMs      the lease; renewed every third of it.
 * @param joinCredential this rank's JOIN credential for {@code JobContext.joinCredential} (docs/security.md), or
 *                     {@link org.inagg.wire.InaggHeader#NO_CREDENTIAL} from a controller that gives none.
 */
public record Assignment(String registration, String name, int jobId, int workerId, int world,
    InetSocketAddress switchAddress, int session, int slots, int lanes, long leaseMs, long joinCredential)
{
    @Override
    public String toString()
    {
        // The credential is a secret: never in a log line or an exception.
        return "Assignment[registration=" + registration + ", name=" + name + ", jobId=" + jobId + ", workerId="
            + workerId + ", world=" + world + ", switchAddress=" + switchAddress + ", session=" + session
            + ", slots=" + slots + ", lanes=" + lanes + ", leaseMs=" + leaseMs + ", joinCredential="
            + (joinCredential == org.inagg.wire.InaggHeader.NO_CREDENTIAL ? "none" : "set") + "]";
    }
}
