package org.inagg.services.controller;

import java.net.InetAddress;

/**
 * Who may act on a job (issue 24, docs/security.md): the holder of its secret ({@link JobSecret}) or an operator
 * ({@link Caller}); and a registration states the UDP source its request comes from, unless the controller trusts
 * stated sources (behind NAT, or on a separate management network).
 */
final class JobAccess
{
    private final boolean trustSources;

    JobAccess(final boolean trustSources)
    {
        this.trustSources = trustSources;
    }

    static boolean allowed(final ControlledJob job, final Caller caller)
    {
        return caller.operator() || JobSecret.matches(job.secretHash, caller.jobSecret());
    }

    /** @throws Refusal NOT_ALLOWED naming the job and what was tried, unless the caller is its owner or an operator. */
    static void authorize(final ControlledJob job, final Caller caller, final String what)
    {
        if (!allowed(job, caller))
        {
            throw new Refusal(Refusal.Reason.NOT_ALLOWED, "may not " + what + " job '" + job.name + "': "
                + (caller.jobSecret() == null ? "no " : "wrong ") + JobSecret.HEADER + " (the ranks of one job share"
                + " its secret, e.g. through " + JobSecret.ENV + "; an operator's token may act on any job)");
        }
    }

    /** @throws Refusal NOT_ALLOWED naming both addresses if the stated source is not the caller's (unless trusted). */
    void requireOwnSource(final RegisterRequest request, final Caller caller)
    {
        final InetAddress stated = request.source().getAddress();
        if (trustSources || caller.operator() || stated.equals(caller.address())
            || stated.isLoopbackAddress() && caller.address().isLoopbackAddress()) // 127.0.0.1 and ::1: this host
        {
            return;
        }
        throw new Refusal(Refusal.Reason.NOT_ALLOWED, "rank " + request.rank() + " of job '" + request.name()
            + "' states UDP source " + stated.getHostAddress() + " but its request comes from "
            + caller.address().getHostAddress() + "; a rank registers the address it sends from (a controller behind"
            + " NAT or on a separate management network runs with --trust-sources)");
    }
}
