package org.inagg.services.agent;

import java.nio.charset.StandardCharsets;

/** UTF-8 text cut to a byte budget without splitting a character. */
final class Utf8
{
    private Utf8()
    {
    }

    static byte[] truncate(final String text, final int maxBytes)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= maxBytes)
        {
            return bytes;
        }
        int end = maxBytes;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80)
        {
            end--;
        }
        return java.util.Arrays.copyOf(bytes, end);
    }
}
