package org.inagg.p4.membership;

import java.lang.foreign.MemorySegment;

import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.RejectReason;

/**
 * The two messages every node sends about a job's session, written once: the REJECT that answers a packet of another
 * session, and the notice with which a node whose session a rejoin started tells the node above it (a first-level or
 * ESA switch its parameter server; docs/sessions.md). Each returns false when the transport is full, for the caller to
 * count in its own counters; neither allocates.
 */
public final class SessionMessages
{
    private SessionMessages()
    {
    }

    /**
     * REJECT STALE_SESSION to {@code peer} for the packet at {@code o}: the job's current session and, in Sequence, the
     * worker whose rejoin started it.
     */
    public static boolean replyStaleSession(final Transport transport, final int peer, final JobMembership membership,
        final MemorySegment m, final long o, final int worker)
    {
        final long offset = transport.claim(peer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            return false;
        }
        InaggHeader.writeReject(transport.txMemory(), offset, InaggHeader.jobId(m, o), worker,
            RejectReason.STALE_SESSION, membership.session(), membership.sessionCause());
        transport.commit();
        return true;
    }

    /**
     * The JOIN at {@code o}, as it came, to {@code upstreamPeer} with its Session field set to the job's session: the
     * node above starts that session if it is newer than its own, or learns that this node is in it.
     */
    public static boolean noticeSession(final Transport transport, final int upstreamPeer,
        final JobMembership membership, final MemorySegment m, final long o)
    {
        final long offset = transport.claim(upstreamPeer, InaggHeader.LENGTH);
        if (offset == Transport.CLAIM_FAILED)
        {
            return false;
        }
        final MemorySegment tx = transport.txMemory();
        MemorySegment.copy(m, o, tx, offset, InaggHeader.LENGTH);
        InaggHeader.setSession(tx, offset, membership.session());
        transport.commit();
        return true;
    }
}
