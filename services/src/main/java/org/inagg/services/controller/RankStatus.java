package org.inagg.services.controller;

import java.util.List;

/**
 * A registration as its rank sees it at one moment ({@link JobLifecycle#status}): ready, with everything the rank needs
 * to join the switch, or waiting for the ranks still missing.
 *
 * @param registration   the registration (and lease) id.
 * @param name           the job's name.
 * @param jobId          the job id.
 * @param session        the job's current session.
 * @param world          the job's W.
 * @param rank           the rank (its worker id once ready).
 * @param ready          the job runs in this registration's session.
 * @param joinCredential the rank's JOIN credential (meaningful when ready).
 * @param slots          the job's slots...
 * @param slotBase       ...from here.
 * @param lanes          lanes per packet.
 * @param dtype          the job's dtype.
 * @param elements       elements per tensor.
 * @param registered     ranks registered into the current session.
 * @param missing        ranks not registered into it, ascending.
 * @param switchError    why the switch refused the job at the last try, when every rank registered; else null.
 * @param newSecret      the job's secret, when this registration admitted the job and made it; else null.
 */
record RankStatus(String registration, String name, int jobId, int session, int world, int rank, boolean ready,
    long joinCredential, int slots, int slotBase, int lanes, String dtype, long elements, int registered,
    List<Integer> missing, String switchError, String newSecret)
{
    @Override
    public String toString()
    {
        // the credential and the secret are secrets: never in a log line or an exception
        return "RankStatus[registration=" + registration + ", name=" + name + ", jobId=" + jobId + ", session="
            + session + ", rank=" + rank + ", ready=" + ready + ", registered=" + registered + " of " + world + "]";
    }
}
