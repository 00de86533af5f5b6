package org.inagg.services.cli;

import java.util.Locale;

/**
 * Whether the tensors a command is about to allocate fit the heap ({@link Runtime#maxMemory()}), checked before
 * anything is allocated or opened, and what to tell the user when they do not (or when an allocation fails anyway):
 * "a tensor of N elements needs X bytes; the heap has Y (set INAGG_JAVA_OPTS=-Xmx...)" rather than an
 * OutOfMemoryError's stack trace.
 */
public final class TensorMemory
{
    /** The environment variable bin/inagg passes to the JVM. */
    public static final String JAVA_OPTS_ENV = "INAGG_JAVA_OPTS";
    /** Heap kept for everything but the tensors (transport buffers, counters, class metadata on the heap). */
    static final long HEADROOM_BYTES = 64L << 20;

    private TensorMemory()
    {
    }

    /**
     * @param option          the option that sets the size, e.g. {@code -n/--elements}.
     * @param elements        elements per tensor.
     * @param bytesPerElement bytes of one element.
     * @param tensors         tensors of that size the command holds at once.
     * @param which           what they are, for the message ("source and result").
     * @throws IllegalArgumentException naming the option, the bytes needed and the heap, if they do not fit.
     */
    public static void require(final String option, final long elements, final int bytesPerElement,
        final long tensors, final String which)
    {
        require(option, elements, bytesPerElement, tensors, which, Runtime.getRuntime().maxMemory());
    }

    static void require(final String option, final long elements, final int bytesPerElement, final long tensors,
        final String which, final long heapBytes)
    {
        final long perTensor = elements * bytesPerElement;
        final double total = (double)perTensor * tensors;
        if (total + HEADROOM_BYTES <= heapBytes)
        {
            return;
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT, "%s %,d: a tensor of %,d elements needs %,d bytes"
            + " (%s), and this run holds %d of them (%s); the heap has %,d bytes (%s) (set %s=-Xmx%dg)", option,
            elements, elements, perTensor, human(perTensor), tensors, which, heapBytes, human(heapBytes), JAVA_OPTS_ENV,
            suggestedGiB(total)));
    }

    /** The message for an OutOfMemoryError that escaped the checks: the heap and how to raise it. */
    public static String outOfMemory(final OutOfMemoryError error)
    {
        final long heap = Runtime.getRuntime().maxMemory();
        return String.format(Locale.ROOT, "out of memory (%s): the heap has %,d bytes (%s); for large tensors (-n) set"
            + " %s=-Xmx<size>, e.g. -Xmx%dg", error.getMessage(), heap, human(heap), JAVA_OPTS_ENV,
            Math.max(2, 2 * ((heap + (1L << 30) - 1) >> 30)));
    }

    private static long suggestedGiB(final double bytes)
    {
        return (long)Math.ceil((bytes * 1.25 + (256L << 20)) / (1L << 30));
    }

    private static String human(final long bytes)
    {
        return bytes >= 1L << 30 ? String.format(Locale.ROOT, "%.1f GiB", bytes / (double)(1L << 30))
            : String.format(Locale.ROOT, "%.1f MiB", bytes / (double)(1L << 20));
    }
}
