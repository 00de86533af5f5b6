package org.inagg.protocol;

import java.lang.foreign.MemorySegment;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;

/**
 * Lanes between an operation's tensors and a packet's payload: float SUM as fixed point scaled with the block's agreed
 * exponent ({@link FixedPoint#shift}, the same for every worker of the job, so a retransmission is bit-identical),
 * float MIN and MAX as {@link OrderedKeys}, everything else as raw INT32. Heap float arrays take the converter's array
 * path, anything else the memory segment's.
 * <p>
 * Stateless past its construction; no allocation.
 */
final class LaneCodec
{
    private final FixedPointConverter converter;
    private final int workers;

    LaneCodec(final FixedPointConverter converter, final int workers)
    {
        this.converter = converter;
        this.workers = workers;
    }

    /** Writes {@code count} lanes from element {@code first} of the operation's source at {@code lanes} of {@code m}. */
    void write(
        final AllReduceOperation op, final boolean fixedPoint, final long first, final int count,
        final int blockExponent, final MemorySegment m, final long lanes)
    {
        final long sourceOffset = first * Integer.BYTES;
        if (fixedPoint && op.sourceArray() != null)
        {
            converter.quantize(op.sourceArray(), op.sourceIndex() + (int)first, count,
                FixedPoint.shift(blockExponent, workers), m, lanes);
        }
        else if (fixedPoint)
        {
            converter.quantize(op.source(), sourceOffset, count, FixedPoint.shift(blockExponent, workers), m, lanes);
        }
        else if (op.orderedKeys())
        {
            OrderedKeys.encode(op.source(), sourceOffset, count, m, lanes);
        }
        else
        {
            converter.encodeInts(op.source(), sourceOffset, count, m, lanes);
        }
    }

    /** Reads {@code count} lanes at {@code lanes} of {@code m} into the destination from its element {@code first}. */
    void read(
        final MemorySegment m, final long lanes, final AllReduceOperation op, final boolean fixedPoint, final long first,
        final int count, final int blockExponent)
    {
        final long destinationOffset = first * Integer.BYTES;
        if (fixedPoint && op.destinationArray() != null)
        {
            converter.dequantize(m, lanes, count, FixedPoint.shift(blockExponent, workers), op.destinationArray(),
                op.destinationIndex() + (int)first);
        }
        else if (fixedPoint)
        {
            converter.dequantize(m, lanes, count, FixedPoint.shift(blockExponent, workers), op.destination(),
                destinationOffset);
        }
        else if (op.orderedKeys())
        {
            OrderedKeys.decode(m, lanes, count, op.destination(), destinationOffset);
        }
        else
        {
            converter.decodeInts(m, lanes, count, op.destination(), destinationOffset);
        }
    }
}
