package org.inagg.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class RetransmissionTimerTest
{
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void shouldUseTheInitialTimeoutUntilTheFirstSample()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(2 * MS, 2_500 * MS, 100 * MS, MS);

        assertThat(timer.rtoNs()).isEqualTo(100 * MS);
        assertThat(timer.samples()).isZero();
    }

    @Test
    void shouldSetSmoothedRttAndVariationFromTheFirstSampleAsRfc6298Says()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(MS, 2_500 * MS, 100 * MS, MS);

        timer.onSample(10 * MS);

        assertThat(timer.smoothedRttNs()).isEqualTo(10 * MS);
        assertThat(timer.rttVariationNs()).isEqualTo(5 * MS);
        assertThat(timer.rtoNs()).isEqualTo(10 * MS + 4 * 5 * MS);
    }

    @Test
    void shouldConvergeOnASteadyRoundTripAndKeepTheGranularityAboveIt()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(MS / 10, 2_500 * MS, 100 * MS, MS);

        for (int i = 0; i < 200; i++)
        {
            timer.onSample(3 * MS);
        }

        assertThat(timer.smoothedRttNs()).isEqualTo(3 * MS);
        assertThat(timer.rttVariationNs()).isLessThan(MS / 100);
        assertThat(timer.rtoNs()).isEqualTo(3 * MS + MS); // SRTT + max(G, 4 RTTVAR), G = 1 ms
    }

    @Test
    void shouldGrowWithVariationSoThatADescheduledPeerDoesNotLookLikeALoss()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(MS, 2_500 * MS, 100 * MS, MS);
        for (int i = 0; i < 50; i++)
        {
            timer.onSample(i % 2 == 0 ? MS : 9 * MS);
        }

        assertThat(timer.rtoNs()).isGreaterThan(9 * MS);
    }

    @Test
    void shouldClampToTheFloorAndTheCeiling()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(2 * MS, 50 * MS, 100 * MS, 0);
        assertThat(timer.rtoNs()).isEqualTo(50 * MS);

        for (int i = 0; i < 100; i++)
        {
            timer.onSample(10_000);
        }
        assertThat(timer.rtoNs()).isEqualTo(2 * MS);

        timer.onSample(10_000 * MS);
        assertThat(timer.rtoNs()).isEqualTo(50 * MS);
    }

    @Test
    void shouldBackOffExponentiallyUpToThreeDoublingsAndTheCeiling()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(2 * MS, 40 * MS, 2 * MS, 0);

        assertThat(timer.timeoutNs(0)).isEqualTo(2 * MS);
        assertThat(timer.timeoutNs(1)).isEqualTo(4 * MS);
        assertThat(timer.timeoutNs(2)).isEqualTo(8 * MS);
        assertThat(timer.timeoutNs(3)).isEqualTo(16 * MS);
        assertThat(timer.timeoutNs(RetransmissionTimer.MAX_BACKOFF_SHIFT + 5)).isEqualTo(16 * MS);

        final RetransmissionTimer capped = new RetransmissionTimer(2 * MS, 10 * MS, 2 * MS, 0);
        assertThat(capped.timeoutNs(3)).isEqualTo(10 * MS);
    }

    @Test
    void shouldIgnoreANegativeSample()
    {
        final RetransmissionTimer timer = new RetransmissionTimer(MS, 100 * MS, 20 * MS, 0);

        timer.onSample(-5);

        assertThat(timer.samples()).isZero();
        assertThat(timer.rtoNs()).isEqualTo(20 * MS);
    }

    @Test
    void shouldRefuseAFloorAboveTheCeiling()
    {
        assertThatThrownBy(() -> new RetransmissionTimer(10 * MS, MS, MS, 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("floor");
    }
}
