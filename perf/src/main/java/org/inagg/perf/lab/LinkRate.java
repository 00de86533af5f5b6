package org.inagg.perf.lab;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A link's rate in bits per second, written as tc writes it: {@code 100mbit}, {@code 1gbit}, {@code 2.5gbit},
 * {@code 500kbit}, or plain bits per second; decimal units (1 mbit = 10^6 bits), case-insensitive, an optional
 * {@code /s} or {@code ps} after the unit ({@code 100Mbit/s}, {@code 1Gbps} is bits, not bytes).
 *
 * @param bitsPerSecond the rate, from {@link #MIN} to {@link #MAX} bits per second.
 */
public record LinkRate(long bitsPerSecond)
{
    /** 64 kbit/s: slower links take minutes for a small tensor. */
    public static final long MIN = 64_000L;
    /** 100 Gbit/s: beyond what tbf on a veth shapes precisely on this kind of machine. */
    public static final long MAX = 100_000_000_000L;
    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(bit|kbit|mbit|gbit|k|m|g)?(?:/s|ps|bps)?");

    public LinkRate
    {
        if (bitsPerSecond < MIN || bitsPerSecond > MAX)
        {
            throw new IllegalArgumentException("link rate " + bitsPerSecond + " bit/s is outside " + MIN + " bit/s.."
                + MAX / 1_000_000_000L + " Gbit/s");
        }
    }

    /** Parses {@code text}; the error names it and the forms accepted. */
    public static LinkRate parse(final String text)
    {
        final Matcher matcher = FORM.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (!matcher.matches())
        {
            throw new IllegalArgumentException("bad link rate '" + text + "': write it as tc does, e.g. 100mbit, "
                + "1gbit, 2.5gbit, 500kbit or bits per second");
        }
        final double value = Double.parseDouble(matcher.group(1));
        final String unit = matcher.group(2) == null ? "bit" : matcher.group(2);
        final double scale = switch (unit)
        {
            case "k", "kbit" -> 1e3;
            case "m", "mbit" -> 1e6;
            case "g", "gbit" -> 1e9;
            default -> 1;
        };
        final double bits = value * scale;
        if (bits < MIN || bits > MAX)
        {
            throw new IllegalArgumentException("link rate '" + text + "' is outside 64kbit..100gbit");
        }
        return new LinkRate(Math.round(bits));
    }

    /** Bytes per second. */
    public double bytesPerSecond()
    {
        return bitsPerSecond / 8.0;
    }

    /** For tc: whole bits per second. */
    public String tc()
    {
        return bitsPerSecond + "bit";
    }

    /** {@code 100 Mbit/s}, {@code 2.5 Gbit/s}. */
    @Override
    public String toString()
    {
        if (bitsPerSecond >= 1_000_000_000L)
        {
            return trim(bitsPerSecond / 1e9) + " Gbit/s";
        }
        if (bitsPerSecond >= 1_000_000L)
        {
            return trim(bitsPerSecond / 1e6) + " Mbit/s";
        }
        return trim(bitsPerSecond / 1e3) + " kbit/s";
    }

    private static String trim(final double value)
    {
        return value == Math.rint(value) ? Long.toString((long)value) : String.format(Locale.ROOT, "%.3g", value);
    }
}
