package org.inagg.p4.membership;

import static org.assertj.core.api.Assertions.assertThat;

import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;

/**
 * {@link JobMembership#mayPin}: which JOIN from a registered source's address, through a link-layer source not pinned
 * to it (over DPDK: another MAC), may be decided as the source's own and pin it.
 */
class JobMembershipPinTest
{
    private static final int[] PEERS = {10, 11};

    @Test
    void shouldLetTheFirstJoinPinAndOnlyACredentialMoveThePin()
    {
        final JobMembership noCredentials = new JobMembership(1, 2, PEERS, 0);
        assertThat(noCredentials.mayPin(0, 10, false)).as("the worker's first JOIN pins").isTrue();
        assertThat(noCredentials.mayPin(0, 10, true)).as("then nobody without a credential moves the pin").isFalse();

        final JobMembership withCredentials = new JobMembership(1, 2, PEERS,
            new long[] {0x1234L, InaggHeader.NO_CREDENTIAL}, 0, true);
        assertThat(withCredentials.mayPin(0, 10, true)).as("a JOIN that must show worker 0's credential").isTrue();
        assertThat(withCredentials.mayPin(1, 11, true)).as("worker 1 has none").isFalse();
        assertThat(withCredentials.mayPin(1, 11, false)).isTrue();
    }

    @Test
    void shouldNeverPinForAnotherWorkersSourceAWorkerOutOfRangeOrAnOpenJob()
    {
        final JobMembership job = new JobMembership(1, 2, PEERS, 0);
        assertThat(job.mayPin(0, 11, false)).as("worker 1's source").isFalse();
        assertThat(job.mayPin(2, 10, false)).isFalse();
        assertThat(job.mayPin(-1, 10, false)).isFalse();
        assertThat(new JobMembership(1, 2, null, 0).mayPin(0, 10, false)).as("open mode: nothing registered").isFalse();
    }
}
