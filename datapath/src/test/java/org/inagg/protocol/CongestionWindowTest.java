package org.inagg.protocol;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AIMD on the slots in flight: halved once per loss episode (a loss of a packet sent before the last cut never cuts
 * again, as RFC 9002's recovery period), never below two, grown back by one slot per window of results up to the pool.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CongestionWindowTest
{
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 5_000_000_000L, Long.MAX_VALUE - 1})
    void shouldHalveTheWindowOnTheFirstLoss(final long stamp)
    {
        // Regression (issue 23): the first cut compared the clock with a Long.MIN_VALUE "never", which overflowed for
        // every reading >= 0, so the window was never cut.
        final CongestionWindow window = new CongestionWindow();
        window.reset(32);
        assertThat(window.onLoss(stamp, stamp)).isTrue();
        assertThat(window.size()).isEqualTo(16);
    }

    @Test
    void shouldCutOncePerLossEpisodeWhateverResultsCameBack()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(64);
        assertThat(window.onLoss(90, 100)).isTrue();
        assertThat(window.onLoss(95, 101)).as("another packet of the same window").isFalse();
        window.onResult();
        assertThat(window.onLoss(100, 140)).as("sent before the cut, judged after results came back").isFalse();
        assertThat(window.size()).isBetween(32.0, 32.1);
        assertThat(window.onLoss(101, 150)).as("sent after the cut: a new episode").isTrue();
        assertThat(window.size()).isBetween(16.0, 16.1);
        assertThat(window.onLoss(140, 160)).as("sent before the second cut").isFalse();
    }

    @Test
    void shouldStartEveryJoinWithoutAnEpisode()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(16);
        assertThat(window.onLoss(5, 5)).isTrue();
        window.reset(16);
        assertThat(window.size()).isEqualTo(16);
        assertThat(window.onLoss(3, 6)).as("a stamp below the last cut's, after a rejoin").isTrue();
    }

    @Test
    void shouldNeverCutBelowTwoPackets()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(5);
        for (int i = 0; i < 10; i++)
        {
            assertThat(window.onLoss(2L * i + 1, 2L * i + 1)).isTrue();
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
        window.onLoss(0, 0);
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
