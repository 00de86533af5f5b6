package org.inagg.perf.peers;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/** inagg's UDP processes on emulated links: the switch's defaults on a standard MTU, packets that fill a jumbo one. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InaggProcessPeerTest
{
    private static final double GBIT = 1e9;
    private static final long BYTES = 4L << 22;

    @Test
    void shouldUseTheSwitchDefaultsUpToAStandardMtu()
    {
        final InaggProcessPeer peer = InaggProcessPeer.forMtu(1500, List.of(), List.of());
        assertThat(peer.runsAcrossHosts()).isTrue();
        assertThat(peer.name()).isEqualTo("inagg UDP processes");
        assertThat(peer.boundSeconds(4, BYTES, GBIT)).isEqualTo(LinkBounds.inaSeconds(BYTES, 256, GBIT));
    }

    @Test
    void shouldFillAJumboMtuAndKeepTheDefaultLanesInFlight()
    {
        final InaggProcessPeer peer = InaggProcessPeer.forMtu(9000, List.of(), List.of());
        assertThat(peer.runsAcrossHosts()).isTrue();
        assertThat(peer.name()).isEqualTo("inagg UDP processes, 2048 lanes");
        assertThat(peer.boundSeconds(4, BYTES, GBIT)).isEqualTo(LinkBounds.inaSeconds(BYTES, 2048, GBIT))
            .isLessThan(LinkBounds.inaSeconds(BYTES, 256, GBIT));
        // 2,048 lanes: 20 + 8,192 bytes of inagg, 8,240 with IPv4 and UDP, within 9,000; 4,096 would not fit.
        assertThat(InaggProcessPeer.forMtu(8239, List.of(), List.of()).name()).endsWith(", 1024 lanes");
        assertThat(InaggProcessPeer.forMtu(8240, List.of(), List.of()).name()).endsWith(", 2048 lanes");
        assertThat(InaggProcessPeer.forMtu(65535, List.of(), List.of()).name()).endsWith(", 8192 lanes");
    }

    @Test
    void shouldKeepLoopbackDatagramsOffTheLinks()
    {
        final InaggProcessPeer loopback = new InaggProcessPeer(InaggProcessPeer.LOOPBACK_LANES,
            InaggProcessPeer.LOOPBACK_SLOTS, List.of(), List.of());
        assertThat(loopback.runsAcrossHosts()).isFalse();
    }
}
