package org.inagg.gpu.passing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import org.inagg.api.AllReduceJob;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The max of the hosts' exponents, recovered from int32 sums, for field widths 1, 2, 4 and 8 bits. */
@Timeout(60)
class ExponentAgreementTest
{
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5, 16})
    void shouldAgreeOnTheMaximumExponentOfEveryBlock(final int hostCount)
    {
        final int blocks = 700;
        final SplittableRandom random = new SplittableRandom(hostCount);
        final int[][] local = new int[hostCount][blocks];
        final int[] expected = new int[blocks];
        java.util.Arrays.fill(expected, Integer.MIN_VALUE);
        for (int h = 0; h < hostCount; h++)
        {
            for (int b = 0; b < blocks; b++)
            {
                local[h][b] = b < 2 ? (b == 0 ? FixedPoint.MIN_EXPONENT : FixedPoint.MAX_EXPONENT)
                    : random.nextInt(FixedPoint.MIN_EXPONENT, FixedPoint.MAX_EXPONENT + 1);
                expected[b] = Math.max(expected[b], local[h][b]);
            }
        }
        try (InProcessFabric fabric = new InProcessFabric(new int[] {3}, new int[] {hostCount}, 32, 64, 2);
             Hosts hosts = new Hosts(hostCount))
        {
            final ExponentAgreement agreement = new ExponentAgreement(hostCount);
            hosts.run(h ->
            {
                final int[][] exponents = {local[h].clone()};
                agreement.agree(new AllReduceJob[] {fabric.job(0, h)}, exponents);
                assertThat(exponents[0]).isEqualTo(expected);
            });
        }
    }
}
