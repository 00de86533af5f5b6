package org.inagg.services.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class InHostReducerTest
{
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    @Test
    void shouldSumFloatsInRankOrderLikeAScalarLoopOnOneOrTwoThreads()
    {
        for (final int threads : new int[] {1, 2})
        {
            for (final int n : new int[] {0, 1, 15, 17, 1000, (int)InHostReducer.PARALLEL_THRESHOLD + 5})
            {
                try (Arena arena = Arena.ofShared(); InHostReducer reducer = new InHostReducer(threads))
                {
                    final SplittableRandom random = new SplittableRandom(n);
                    final MemorySegment[] in = new MemorySegment[3];
                    for (int r = 0; r < in.length; r++)
                    {
                        in[r] = arena.allocate(Math.max(4, 4L * n));
                        for (int i = 0; i < n; i++)
                        {
                            in[r].setAtIndex(FLOAT, i, (float)random.nextGaussian());
                        }
                    }
                    final MemorySegment out = arena.allocate(Math.max(4, 4L * n));
                    assertThat(reducer.reduce(in, out, n, AgentProtocol.DTYPE_FLOAT32, 1)).isTrue();
                    for (int i = 0; i < n; i++)
                    {
                        final float want = in[0].getAtIndex(FLOAT, i) + in[1].getAtIndex(FLOAT, i)
                            + in[2].getAtIndex(FLOAT, i);
                        assertThat(out.getAtIndex(FLOAT, i)).as("n=%d i=%d", n, i).isEqualTo(want);
                    }
                    assertThat(reducer.reduce(in, out, n, AgentProtocol.DTYPE_FLOAT32, 4)).isTrue();
                    if (n > 0)
                    {
                        final float want = (in[0].getAtIndex(FLOAT, n - 1) + in[1].getAtIndex(FLOAT, n - 1)
                            + in[2].getAtIndex(FLOAT, n - 1)) * 0.25f;
                        assertThat(out.getAtIndex(FLOAT, n - 1)).isEqualTo(want);
                    }
                }
            }
        }
    }

    @Test
    void shouldFoldAnyNumberOfRanksInRankOrderAcrossBlocksAndTails()
    {
        // The kernels fold four inputs at a time, block by block: every arity from 1 to 9, lengths around the block
        // size and the vector width, both types, SUM and AVG, against the scalar left fold bit for bit.
        for (final int ranks : new int[] {1, 2, 3, 4, 5, 7, 8, 9})
        {
            for (final int n : new int[] {1, 7, 8193, 2 * 8192 + 13})
            {
                try (Arena arena = Arena.ofConfined())
                {
                    final SplittableRandom random = new SplittableRandom(31L * ranks + n);
                    final MemorySegment[] in = new MemorySegment[ranks];
                    for (int r = 0; r < ranks; r++)
                    {
                        in[r] = arena.allocate(4L * n);
                        for (int i = 0; i < n; i++)
                        {
                            in[r].setAtIndex(FLOAT, i, (float)(random.nextGaussian() * Math.scalb(1.0, r * 3 - 6)));
                        }
                    }
                    final MemorySegment out = arena.allocate(4L * n);
                    for (final int divisor : new int[] {1, ranks})
                    {
                        assertThat(InHostReducer.range(in, out, 0, n, AgentProtocol.DTYPE_FLOAT32, divisor)).isTrue();
                        for (int i = 0; i < n; i++)
                        {
                            float want = in[0].getAtIndex(FLOAT, i);
                            for (int r = 1; r < ranks; r++)
                            {
                                want += in[r].getAtIndex(FLOAT, i);
                            }
                            want *= 1.0f / divisor;
                            assertThat(Float.floatToRawIntBits(out.getAtIndex(FLOAT, i)))
                                .as("%d ranks, n=%d, i=%d, divisor %d", ranks, n, i, divisor)
                                .isEqualTo(Float.floatToRawIntBits(want));
                        }
                        assertThat(InHostReducer.range(in, out, 0, n, AgentProtocol.DTYPE_INT32, divisor)).isTrue();
                        for (int i = 0; i < n; i++)
                        {
                            int want = in[0].getAtIndex(INT, i);
                            for (int r = 1; r < ranks; r++)
                            {
                                want += in[r].getAtIndex(INT, i);
                            }
                            assertThat(out.getAtIndex(INT, i)).as("int32 %d ranks, n=%d, i=%d", ranks, n, i)
                                .isEqualTo(want / divisor);
                        }
                    }
                    if (ranks > 4)
                    {
                        // An infinity in a later group of four is found too.
                        in[ranks - 1].setAtIndex(FLOAT, n - 1, Float.POSITIVE_INFINITY);
                        assertThat(InHostReducer.range(in, out, 0, n, AgentProtocol.DTYPE_FLOAT32, 1)).isFalse();
                    }
                }
            }
        }
    }

    @Test
    void shouldFindNaNInfinityAndOverflowWhereverTheyAre()
    {
        try (Arena arena = Arena.ofShared(); InHostReducer reducer = new InHostReducer(2))
        {
            final int n = (int)InHostReducer.PARALLEL_THRESHOLD + 3;
            final MemorySegment a = arena.allocate(4L * n);
            final MemorySegment b = arena.allocate(4L * n);
            final MemorySegment out = arena.allocate(4L * n);
            final MemorySegment[] in = {a, b};
            for (final int at : new int[] {0, 7, n / 2 + 1, n - 1})
            {
                for (final float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY})
                {
                    b.setAtIndex(FLOAT, at, bad);
                    assertThat(reducer.reduce(in, out, n, AgentProtocol.DTYPE_FLOAT32, 1)).as("%s at %d", bad, at)
                        .isFalse();
                    b.setAtIndex(FLOAT, at, 0.0f);
                }
            }
            assertThat(reducer.reduce(in, out, n, AgentProtocol.DTYPE_FLOAT32, 1)).isTrue();
            a.setAtIndex(FLOAT, 5, Float.MAX_VALUE);
            b.setAtIndex(FLOAT, 5, Float.MAX_VALUE);
            assertThat(reducer.reduce(in, out, n, AgentProtocol.DTYPE_FLOAT32, 1)).isFalse();
        }
    }

    @Test
    void shouldSumIntsExactlyWrappingAndDivideTruncatingForAvg()
    {
        try (Arena arena = Arena.ofShared(); InHostReducer reducer = new InHostReducer(1))
        {
            final int n = 37;
            final MemorySegment a = arena.allocate(4L * n);
            final MemorySegment b = arena.allocate(4L * n);
            final MemorySegment out = arena.allocate(4L * n);
            for (int i = 0; i < n; i++)
            {
                a.setAtIndex(INT, i, i == 0 ? Integer.MAX_VALUE : i);
                b.setAtIndex(INT, i, i == 0 ? 1 : -3 * i);
            }
            assertThat(reducer.reduce(new MemorySegment[] {a, b}, out, n, AgentProtocol.DTYPE_INT32, 1)).isTrue();
            assertThat(out.getAtIndex(INT, 0)).isEqualTo(Integer.MIN_VALUE);
            assertThat(out.getAtIndex(INT, 36)).isEqualTo(-72);
            reducer.reduce(new MemorySegment[] {a, b}, out, n, AgentProtocol.DTYPE_INT32, 2);
            assertThat(out.getAtIndex(INT, 35)).isEqualTo(-35);
            assertThat(out.getAtIndex(INT, 1)).isEqualTo(-1);
        }
    }
}
