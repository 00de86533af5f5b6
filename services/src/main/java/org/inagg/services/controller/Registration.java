package org.inagg.services.controller;

import java.net.InetSocketAddress;

/** One rank's registration with a job: its id (the lease's), its source, the session it registered into. */
final class Registration
{
    final String id;
    final String jobName;
    final int rank;
    final InetSocketAddress source;
    final String incarnation;
    /** The JOIN credential this registration's process shows the switch (docs/security.md); fresh per registration. */
    final long joinCredential;
    /** The job session this registration belongs to; older than the job's after a restart of another rank. */
    final int session;
    /** Monotonic ms after which the rank counts as lost. */
    long leaseDeadlineMs;

    Registration(final String id, final String jobName, final int rank, final InetSocketAddress source,
        final String incarnation, final int session, final long leaseDeadlineMs, final long joinCredential)
    {
        this.joinCredential = joinCredential;
        this.id = id;
        this.jobName = jobName;
        this.rank = rank;
        this.source = source;
        this.incarnation = incarnation;
        this.session = session;
        this.leaseDeadlineMs = leaseDeadlineMs;
    }
}
