package org.inagg.protocol;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AIMD on the slots in flight: halved once per loss episode (until a packet sent after the cut has its result, as
 * NewReno), never below two, grown back by one slot per window of results up to the pool.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CongestionWindowTest
{
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 5_000_000_000L, Long.MAX_VALUE - 1})
    void shouldHalveTheWindowOnTheFirstLoss(final long lastSendStamp)
    {
        // Regression (issue 23): the first cut compared the clock with a Long.MIN_VALUE "never", which overflowed for
        // every reading >= 0, so the window was never cut.
        final CongestionWindow window = new CongestionWindow();
        window.reset(32);
        assertThat(window.onLoss(lastSendStamp)).isTrue();
        assertThat(window.size()).isEqualTo(16);
    }

    @Test
    void shouldCutOncePerLossEpisodeUntilAPacketSentAfterTheCutHasItsResult()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(64);
        assertThat(window.onLoss(100)).isTrue();
        assertThat(window.onLoss(101)).as("another loss of the same window").isFalse();
        window.onResult(99);
        window.onResult(100);
        assertThat(window.onLoss(140)).as("only packets sent before the cut answered: same episode").isFalse();
        assertThat(window.size()).isBetween(32.0, 32.1);
        window.onResult(101);
        assertThat(window.onLoss(150)).as("a packet sent after the cut answered: a new episode").isTrue();
        assertThat(window.size()).isBetween(16.0, 16.1);
    }

    @Test
    void shouldStartEveryJoinWithoutAnOpenEpisode()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(16);
        assertThat(window.onLoss(5)).isTrue();
        window.reset(16);
        assertThat(window.size()).isEqualTo(16);
        assertThat(window.onLoss(6)).isTrue();
    }

    @Test
    void shouldNeverCutBelowTwoPackets()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(5);
        for (int i = 0; i < 10; i++)
        {
            window.onLoss(2L * i);
            window.onResult(2L * i + 1);
        }
        assertThat(window.onLoss(100)).isTrue();
        assertThat(window.size()).isEqualTo(CongestionWindow.MIN_WINDOW);
        assertThat(window.allows(1)).isTrue();
        assertThat(window.allows(2)).isFalse();
    }

    @Test
    void shouldGrowBackByAboutOneSlotPerWindowUpToThePool()
    {
        final CongestionWindow window = new CongestionWindow();
        window.reset(16);
        window.onLoss(0);
        assertThat(window.size()).isEqualTo(8);
        for (int i = 0; i < 8; i++)
        {
            window.onResult(i + 1);
        }
        assertThat(window.size()).isBetween(8.9, 9.0);
        for (int i = 0; i < 1_000; i++)
        {
            window.onResult(i + 9);
        }
        assertThat(window.size()).isEqualTo(16);
        assertThat(window.allows(15)).isTrue();
        assertThat(window.allows(16)).isFalse();
    }
}
