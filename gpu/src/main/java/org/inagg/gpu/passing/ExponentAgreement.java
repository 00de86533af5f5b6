package org.inagg.gpu.passing;

import java.util.concurrent.CompletableFuture;

import org.inagg.InvalidTensorException;
import org.inagg.api.AllReduceJob;
import org.inagg.fixedpoint.FixedPoint;

/**
 * Agrees per-block exponents across the H hosts of a job: {@code E[b] = max over hosts of e_h[b]}, the exponent a
 * flat all-reduce of every GPU's gradient would agree on, through the datapath's int32 all-reduce (switches add; they
 * max-reduce only the exponent in a packet header, which the public API keeps to the float path).
 * <p>
 * A max from sums: the biased exponent {@code e + 96} (0..224) is written as two base-16 digits. Round one, every host
 * sends, per block, a one-hot vector over the 16 values of its high digit, each position a counter field of
 * {@code f} bits ({@code f} = the least power of two with {@code 2^f > H}, so H ones cannot carry into the next field).
 * The highest non-zero field of the sum is the high digit of the max. Round two, the hosts whose high digit equals it
 * send the one-hot of their low digit, the others zeros. Cost: two round trips and {@code 2 * ceil(16 f / 32)} ints per
 * block (2 ints per block of 256 lanes for H &lt;= 3: under 1% of the gradient's bytes).
 * <p>
 * A block with NaN or infinity on any host ({@link FixedPoint#NON_FINITE}) is sent as high digit 15, which no finite
 * exponent has: every host learns of it in round one and fails the same way, so none waits for a round two.
 */
public final class ExponentAgreement
{
    private static final int BIAS = -FixedPoint.MIN_EXPONENT;
    private static final int POSITIONS = 16;
    private static final int NON_FINITE_DIGIT = 15;

    private final int fieldBits;
    private final int positionsPerInt;
    private final int intsPerBlock;

    /** For a job of {@code hosts} contributors. */
    public ExponentAgreement(final int hosts)
    {
        final int countBits = FixedPoint.headroomBits(hosts);
        this.fieldBits = Integer.highestOneBit(countBits) == countBits ? countBits : Integer.highestOneBit(countBits) << 1;
        this.positionsPerInt = Math.max(1, Integer.SIZE / fieldBits);
        this.intsPerBlock = (POSITIONS + positionsPerInt - 1) / positionsPerInt;
    }

    /** Ints sent per block in each of the two rounds. */
    public int intsPerBlock()
    {
        return intsPerBlock;
    }

    /**
     * Agrees the exponents of several independent block ranges at once, range {@code r} over {@code jobs[r]} (every
     * host calls with the same ranges), overwriting {@code exponents[r]} with the agreed values.
     *
     * @throws InvalidTensorException on every host if any host's block holds NaN or an infinity.
     */
    public void agree(final AllReduceJob[] jobs, final int[][] exponents)
    {
        final int ranges = jobs.length;
        final int[][] digits = new int[ranges][];
        final int[][] sums = new int[ranges][];
        final CompletableFuture<?>[] round = new CompletableFuture<?>[ranges];
        for (int r = 0; r < ranges; r++)
        {
            final int[] e = exponents[r];
            digits[r] = new int[e.length];
            sums[r] = new int[e.length * intsPerBlock];
            for (int b = 0; b < e.length; b++)
            {
                final int digit = e[b] == FixedPoint.NON_FINITE ? NON_FINITE_DIGIT : (e[b] + BIAS) >>> 4;
                digits[r][b] = digit;
                mark(sums[r], b, digit);
            }
            round[r] = jobs[r].allReduceAsync(sums[r]);
        }
        Futures.join(CompletableFuture.allOf(round));
        final int[][] highDigits = new int[ranges][];
        for (int r = 0; r < ranges; r++)
        {
            highDigits[r] = new int[exponents[r].length];
            for (int b = 0; b < highDigits[r].length; b++)
            {
                highDigits[r][b] = highestPosition(sums[r], b);
                if (highDigits[r][b] == NON_FINITE_DIGIT)
                {
                    // Every host sees the same sums, so every host throws here before sending round two.
                    throw new InvalidTensorException("block " + b + " of range " + r + " holds NaN or an infinity on "
                        + "this or another host; gradients must be finite. Nothing of this tensor was aggregated.", -1);
                }
            }
        }
        for (int r = 0; r < ranges; r++)
        {
            final int[] e = exponents[r];
            final int[] low = new int[e.length * intsPerBlock];
            for (int b = 0; b < e.length; b++)
            {
                if (digits[r][b] == highDigits[r][b])
                {
                    mark(low, b, (e[b] + BIAS) & 15);
                }
            }
            sums[r] = low;
            digits[r] = highDigits[r];
            round[r] = jobs[r].allReduceAsync(low);
        }
        Futures.join(CompletableFuture.allOf(round));
        for (int r = 0; r < ranges; r++)
        {
            final int[] e = exponents[r];
            for (int b = 0; b < e.length; b++)
            {
                e[b] = (digits[r][b] << 4 | highestPosition(sums[r], b)) - BIAS;
            }
        }
    }

    private void mark(final int[] fields, final int block, final int position)
    {
        fields[block * intsPerBlock + position / positionsPerInt] |= 1 << (position % positionsPerInt * fieldBits);
    }

    private int highestPosition(final int[] fields, final int block)
    {
        final int mask = fieldBits >= Integer.SIZE ? -1 : (1 << fieldBits) - 1;
        for (int position = POSITIONS - 1; position >= 0; position--)
        {
            final int field = fields[block * intsPerBlock + position / positionsPerInt]
                >>> (position % positionsPerInt * fieldBits) & mask;
            if (field != 0)
            {
                return position;
            }
        }
        throw new IllegalStateException("no host contributed an exponent for block " + block + ": the hosts called "
            + "with different tensor layouts, or a result of the int32 all-reduce was corrupted on the way");
    }
}
