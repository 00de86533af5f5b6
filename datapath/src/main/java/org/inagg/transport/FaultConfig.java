package org.inagg.transport;

/**
 * What a {@link FaultInjectingTransport} does to received messages, each decided independently per message from a
 * seeded generator: drop it, deliver it twice, or hold it back for a random delay of up to {@code maxDelayNs}
 * (messages behind it overtake it: reordering).
 */
public record FaultConfig(double dropRate, double duplicateRate, double reorderRate, long maxDelayNs, long seed)
{
    public static final FaultConfig NONE = new FaultConfig(0, 0, 0, 0, 0);

    public FaultConfig
    {
        requireRate("drop", dropRate);
        requireRate("duplicate", duplicateRate);
        requireRate("reorder", reorderRate);
        if (dropRate + duplicateRate + reorderRate > 1.0)
        {
            throw new IllegalArgumentException("drop + duplicate + reorder rates exceed 1: "
                + dropRate + " + " + duplicateRate + " + " + reorderRate);
        }
        if (maxDelayNs < 0)
        {
            throw new IllegalArgumentException("max delay must not be negative, got " + maxDelayNs + " ns");
        }
        if (reorderRate > 0 && maxDelayNs == 0)
        {
            throw new IllegalArgumentException("reordering needs a positive max delay");
        }
    }

    /** Loss {@code rate} with as much duplication and reordering again, as the CLI's {@code --loss} applies. */
    public static FaultConfig lossy(final double rate, final long seed)
    {
        return new FaultConfig(rate, rate, rate, 2_000_000, seed);
    }

    public boolean isNone()
    {
        return dropRate == 0 && duplicateRate == 0 && reorderRate == 0;
    }

    private static void requireRate(final String name, final double rate)
    {
        if (!(rate >= 0 && rate <= 1))
        {
            throw new IllegalArgumentException(name + " rate must be in [0, 1], got " + rate);
        }
    }
}
