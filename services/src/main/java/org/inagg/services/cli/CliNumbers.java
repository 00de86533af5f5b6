package org.inagg.services.cli;

/**
 * Range checks of numeric options, each failing with a message that names the option and its range: a negative
 * {@code --loss} or {@code -n} must never be ignored, nor an overflowing {@code --esa-pool} accepted.
 */
public final class CliNumbers
{
    private CliNumbers()
    {
    }

    /** @throws IllegalArgumentException naming {@code option} unless {@code min <= value <= max}. */
    public static long require(final String option, final long value, final long min, final long max)
    {
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(option + " must be " + range(min, max) + ", got " + value);
        }
        return value;
    }

    /** @throws IllegalArgumentException naming {@code option} unless {@code min <= value <= max} (NaN never is). */
    public static double require(final String option, final double value, final double min, final double max)
    {
        if (!(value >= min && value <= max))
        {
            throw new IllegalArgumentException(option + " must be in [" + min + ", " + max + "], got " + value);
        }
        return value;
    }

    /**
     * Parses one part of an option's value ({@code BASE} of {@code --esa-pool BASE:SLOTS}) within a range.
     *
     * @throws IllegalArgumentException naming the option and the part if it is not a number or out of range.
     */
    static int parseInt(final String option, final String part, final String text, final long min, final long max)
    {
        final long value;
        try
        {
            value = Long.parseLong(text.strip());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(option + ": " + part + " must be a whole number, got '" + text + "'");
        }
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(option + ": " + part + " must be " + range(min, max) + ", got "
                + value);
        }
        return (int)value;
    }

    /**
     * The fault rate of {@code --loss}: each received packet is dropped, duplicated and reordered with this rate each, so
     * the three must fit in one: at most 1/3.
     */
    public static double requireLoss(final double loss)
    {
        if (!(loss >= 0 && loss <= 1.0 / 3))
        {
            throw new IllegalArgumentException("--loss must be in [0, 1/3] (each received packet is dropped, duplicated"
                + " and reordered with this rate each, and the three must add up to at most 1), got " + loss);
        }
        return loss;
    }

    private static String range(final long min, final long max)
    {
        return max == Long.MAX_VALUE || max == Integer.MAX_VALUE ? "at least " + min : "in " + min + ".." + max;
    }
}
