package org.inagg.fixedpoint;

/**
 * The fixed-point number system shared by every worker of a job and by the switch.
 * <p>
 * A tensor is cut into blocks of one packet each. For block {@code b} every worker computes its local exponent
 * {@code e_w = exponent(max |x|)}, the smallest integer with {@code max |x| < 2^e}; the job agrees on
 * {@code E = max_w e_w} (the switch max-reduces it, see the protocol docs) and every worker then scales by
 * {@code 2^shift} with {@code shift = 31 - h - E}, where {@code h = headroomBits(W)} is the least integer with
 * {@code 2^h >= W + 1}. Each quantized lane is then at most {@code 2^(31-h)} in magnitude, so the sum over W workers is
 * at most {@code W * 2^(31-h) <= 2^31 - 2^(31-h)}: it cannot overflow int32.
 * <p>
 * Quantization rounds half away from zero, so the error of one lane is at most {@code 2^(-shift-1)} and the error of a
 * W-worker sum, before the final int-to-float rounding, at most {@code W * 2^(-shift-1)}.
 * <p>
 * Exponents are clamped below at {@link #MIN_EXPONENT}: blocks whose largest magnitude is below {@code 2^-96} are
 * scaled as if it were {@code 2^-96} (keeping every scale factor a normal float). Magnitudes of {@code 2^127} and more
 * (exponent 128, which the wire's signed byte cannot carry) are rejected like NaN and infinities.
 */
public final class FixedPoint
{
    public static final int MIN_EXPONENT = -96;
    /** Largest exponent: the wire carries exponents in a signed byte, whose -128 means "none". */
    public static final int MAX_EXPONENT = 127;
    /** Magnitudes from this one up (2^127, with NaN and infinities) are outside the representable range. */
    public static final float OUT_OF_RANGE_MAGNITUDE = 0x1p127f;
    /**
     * Returned by exponent computations when a block holds NaN, an infinity or a magnitude of at least 2^127 (which
     * would need exponent 128).
     */
    public static final int NON_FINITE = Integer.MAX_VALUE;
    /** Largest number of workers whose sum the scheme keeps exact (headroom must leave at least 14 bits). */
    public static final int MAX_WORKERS = 0xFFFF;

    private FixedPoint()
    {
    }

    /** The least {@code h} with {@code 2^h >= workers + 1}. */
    public static int headroomBits(final int workers)
    {
        return 32 - Integer.numberOfLeadingZeros(workers);
    }

    /** Power of two the lanes of a block with agreed exponent {@code exponent} are multiplied by. */
    public static int shift(final int exponent, final int workers)
    {
        return 31 - headroomBits(workers) - exponent;
    }

    /**
     * Exponent of a block from the largest raw bit pattern of its magnitudes ({@code floatBits & 0x7FFFFFFF}); integer
     * order of non-negative float bit patterns is numeric order, NaN and infinity sort above every finite value.
     */
    public static int exponentOfMaxMagnitudeBits(final int maxMagnitudeBits)
    {
        if (maxMagnitudeBits >= Float.floatToRawIntBits(OUT_OF_RANGE_MAGNITUDE))
        {
            return NON_FINITE;
        }
        final int exponent = (maxMagnitudeBits >>> 23) - 126;
        return Math.max(exponent, MIN_EXPONENT);
    }

    /** Largest error of one quantized lane of a block with agreed exponent {@code exponent}. */
    public static double laneErrorBound(final int exponent, final int workers)
    {
        return Math.scalb(1.0, -shift(exponent, workers) - 1);
    }

    /**
     * Bound on |aggregated float - exact sum of the W inputs| for one lane: W lane errors plus half an ulp of the
     * int-to-float conversion of the sum.
     */
    public static double sumErrorBound(final int exponent, final int workers, final float result)
    {
        return workers * laneErrorBound(exponent, workers) + Math.ulp(result) * 0.5;
    }
}
