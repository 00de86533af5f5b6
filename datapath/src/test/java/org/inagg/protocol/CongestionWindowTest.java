package org.inagg.protocol;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AIMD on the slots in flight: halved once per loss episode (a retransmission timeout), never below two, grown back by
 * one slot per window of results up to the pool. The clock may read anything, negative values included
 * ({@code System.nanoTime} has an arbitrary origin).
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CongestionWindowTest
{
    private static final long RTO_NS = TimeUnit.MILLISECONDS.toNanos(2);

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 5_000_000_000L, Long.MAX_VALUE - 1, -1, -5_000_000_000L, Long.MIN_VALUE + 1})
    void shouldHalveTheWindowOnTheFirstLossWhateverTheClockReads(final long nowNs)
    {
        // Regression (issue 23): the first cut compared nowNs with a Long.MIN_VALUE "never", which overflowed for
        // every nowNs >= 0, so the window was never cut.
        final CongestionWindow window = new CongestionWindow();
        window.reset(32);
        assertThat(window.onLoss(nowNs, RTO_NS)).isTrue();
        assertThat(window.size()).isEqualTo(16);
    }

    @Test
    void shouldCutOncePerLossEpisode()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(64);
        final long t = 1_000_000_000L;
        assertThat(window.onLoss(t, RTO_NS)).isTrue();
        assertThat(window.onLoss(t + RTO_NS, RTO_NS)).as("the same episode").isFalse();
        assertThat(window.size()).isEqualTo(32);
        assertThat(window.onLoss(t + RTO_NS + 1, RTO_NS)).as("a timeout later: a new episode").isTrue();
        assertThat(window.size()).isEqualTo(16);
    }

    @Test
    void shouldNeverCutBelowTwoPackets()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(5);
        for (int i = 0; i < 10; i++)
        {
            window.onLoss(i * (RTO_NS + 1), RTO_NS);
        }
        assertThat(window.size()).isEqualTo(CongestionWindow.MIN_WINDOW);
        assertThat(window.allows(1)).isTrue();
        assertThat(window.allows(2)).isFalse();
    }

    @Test
    void shouldGrowBackByAboutOneSlotPerWindowUpToThePool()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(16);
        window.onLoss(0, RTO_NS);
        assertThat(window.size()).isEqualTo(8);
        for (int i = 0; i < 8; i++)
        {
            window.onResult();
        }
        assertThat(window.size()).isBetween(8.9, 9.0);
        for (int i = 0; i < 1_000; i++)
        {
            window.onResult();
        }
        assertThat(window.size()).isEqualTo(16);
        assertThat(window.allows(15)).isTrue();
        assertThat(window.allows(16)).isFalse();
    }
}
