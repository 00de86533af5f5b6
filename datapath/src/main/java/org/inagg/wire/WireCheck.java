package org.inagg.wire;

/** Outcomes of {@link InaggHeader#check}: integer codes so the hot path neither allocates nor throws. */
public final class WireCheck
{
    public static final int OK = 0;
    public static final int TOO_SHORT = 1;
    public static final int BAD_VERSION = 2;
    public static final int LENGTH_MISMATCH = 3;

    private WireCheck()
    {
    }

    public static String describe(final int code)
    {
        return switch (code)
        {
            case OK -> "ok";
            case TOO_SHORT -> "shorter than the " + InaggHeader.LENGTH + "-byte header";
            case BAD_VERSION -> "unknown header version";
            case LENGTH_MISMATCH -> "length does not match the element count";
            default -> "unknown check code " + code;
        };
    }
}
