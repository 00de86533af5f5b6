package org.inagg.perf.peers;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.services.cli.ProcessCpu;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        // The switch's default fills the MTU (363 lanes at 1500, fewer below): the bound is that of its packets.
        assertThat(peer.boundSeconds(4, BYTES, GBIT)).isEqualTo(LinkBounds.inaSeconds(BYTES, 363, GBIT));
        assertThat(InaggProcessPeer.forMtu(1450, List.of(), List.of()).boundSeconds(4, BYTES, GBIT))
            .isEqualTo(LinkBounds.inaSeconds(BYTES, 350, GBIT));
    }

    @Test
    void shouldSendTheP4ProgramsPacketsAsThePeerBesideTheDefaults()
    {
        final InaggProcessPeer peer = InaggProcessPeer.p4Packets(List.of(), List.of());
        assertThat(peer.runsAcrossHosts()).isTrue();
        assertThat(peer.name()).isEqualTo("inagg UDP processes, 256 lanes");
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
    void shouldFillA1500ByteMtuExactlyWithLanesTheWorkersAcceptByDefault()
    {
        // 363 lanes: 20 + 1,452 bytes of inagg, 1,500 with IPv4 and UDP; the workers' --max-lanes is 363 by default.
        final InaggProcessPeer peer = InaggProcessPeer.fillingMtu(1500, List.of(), List.of());
        assertThat(peer.runsAcrossHosts()).isTrue();
        assertThat(peer.name()).isEqualTo("inagg UDP processes, 363 lanes");
        assertThat(peer.boundSeconds(4, BYTES, GBIT)).isEqualTo(LinkBounds.inaSeconds(BYTES, 363, GBIT))
            .isLessThan(LinkBounds.inaSeconds(BYTES, 256, GBIT));
        assertThat(InaggProcessPeer.fillingMtu(1499, List.of(), List.of()).name()).endsWith(", 362 lanes");
        assertThat(InaggProcessPeer.fillingMtu(9000, List.of(), List.of()).name()).endsWith(", 2238 lanes");
        assertThatThrownBy(() -> InaggProcessPeer.fillingMtu(51, List.of(), List.of()))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MTU 51");
    }

    @Test
    void shouldKeepLoopbackDatagramsOffTheLinks()
    {
        final InaggProcessPeer loopback = new InaggProcessPeer(InaggProcessPeer.LOOPBACK_LANES,
            InaggProcessPeer.LOOPBACK_SLOTS, List.of(), List.of());
        assertThat(loopback.runsAcrossHosts()).isFalse();
    }

    @Test
    void shouldTakeTheSwitchsCpuFromItsWarmUpMarkToItsExit()
    {
        final String mark = ProcessCpu.switchMarkLine(2_000_000_000L);
        final String exit = ProcessCpu.switchExitLine(2_750_000_000L);

        assertThat(InaggProcessPeer.switchCpuSeconds("inagg switch listening\n" + mark + "\n" + exit + "\n"))
            .isEqualTo(0.75);
        // No mark (the warm-up's end never seen), no exit line (killed), or an exit before the mark: no figure.
        assertThat(InaggProcessPeer.switchCpuSeconds(exit)).isNaN();
        assertThat(InaggProcessPeer.switchCpuSeconds(mark)).isNaN();
        assertThat(InaggProcessPeer.switchCpuSeconds(ProcessCpu.switchMarkLine(3_000_000_000L) + "\n" + exit)).isNaN();
    }
}
