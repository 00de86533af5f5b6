package org.inagg.gpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.VectorFixedPointConverter;

/**
 * The reduction device without a GPU: the host's CPU through the Vector API, on the calling thread. Network-order
 * conversions are {@link VectorFixedPointConverter}'s own; the native-order and fused operations apply the same float
 * operations per lane (IEEE multiply, truncating conversion, exact fraction, compare), so results are bit-identical
 * to the datapath's converters and to the CUDA kernels. Buffers are {@link HostMemoryBuffer}s (any
 * {@link DeviceBuffer} with a host segment works).
 */
public final class CpuReducer implements ReductionDevice
{
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfInt NATIVE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final ValueLayout.OfFloat NATIVE_FLOAT =
        ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());

    private final VectorFixedPointConverter converter = new VectorFixedPointConverter();

    @Override
    public String describe()
    {
        return "cpu (Vector API, " + FLOATS.length() + " float lanes)";
    }

    @Override
    public boolean isAsynchronous()
    {
        return false;
    }

    @Override
    public DeviceBuffer allocate(final long bytes)
    {
        return HostMemoryBuffer.allocate(bytes);
    }

    @Override
    public DeviceBuffer allocateHost(final long bytes)
    {
        return HostMemoryBuffer.allocate(bytes);
    }

    @Override
    public void copy(final DeviceBuffer source, final DeviceBuffer destination, final long bytes)
    {
        MemorySegment.copy(segment(source), 0, segment(destination), 0, bytes);
    }

    @Override
    public void copyFromHost(final MemorySegment source, final DeviceBuffer destination)
    {
        MemorySegment.copy(source, 0, segment(destination), 0, source.byteSize());
    }

    @Override
    public void copyToHost(final DeviceBuffer source, final MemorySegment destination)
    {
        MemorySegment.copy(segment(source), 0, destination, 0, destination.byteSize());
    }

    @Override
    public void blockExponents(final DeviceBuffer floats, final long count, final int blockSize, final DeviceBuffer exponents)
    {
        final MemorySegment x = segment(floats);
        final MemorySegment e = segment(exponents);
        final long blocks = (count + blockSize - 1) / blockSize;
        for (long b = 0; b < blocks; b++)
        {
            final int n = (int)Math.min(blockSize, count - b * blockSize);
            e.setAtIndex(NATIVE_INT, b, converter.blockExponent(x, b * blockSize * Float.BYTES, n));
        }
    }

    @Override
    public void maxExponents(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        final MemorySegment o = segment(out);
        MemorySegment.copy(segment(sources.get(0)), 0, o, 0, count * Integer.BYTES);
        for (int j = 1; j < sources.size(); j++)
        {
            final MemorySegment s = segment(sources.get(j));
            for (long i = 0; i < count; i++)
            {
                o.setAtIndex(NATIVE_INT, i, Math.max(o.getAtIndex(NATIVE_INT, i), s.getAtIndex(NATIVE_INT, i)));
            }
        }
    }

    @Override
    public void quantize(
        final DeviceBuffer floats, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer lanes)
    {
        scaling.requireCovers(count);
        final MemorySegment x = segment(floats);
        final MemorySegment l = segment(lanes);
        final MemorySegment e = segment(scaling.exponents());
        final int blockSize = scaling.blockSize();
        for (long b = 0, start = 0; start < count; b++, start += blockSize)
        {
            final int n = (int)Math.min(blockSize, count - start);
            final int shift = FixedPoint.shift(e.getAtIndex(NATIVE_INT, b), scaling.workers());
            final long offset = start * Float.BYTES;
            if (order == LaneOrder.NETWORK)
            {
                converter.quantize(x, offset, n, shift, l, offset);
            }
            else
            {
                quantizeNative(x, offset, n, Math.scalb(1.0f, shift), l);
            }
        }
    }

    private static void quantizeNative(
        final MemorySegment x, final long offset, final int n, final float scale, final MemorySegment lanes)
    {
        final int bound = FLOATS.loopBound(n);
        int i = 0;
        for (; i < bound; i += FLOATS.length())
        {
            final long at = offset + (long)i * Float.BYTES;
            quantizeVector(FloatVector.fromMemorySegment(FLOATS, x, at, ByteOrder.nativeOrder()), scale)
                .intoMemorySegment(lanes, at, ByteOrder.nativeOrder());
        }
        for (; i < n; i++)
        {
            final long at = offset + (long)i * Float.BYTES;
            lanes.set(NATIVE_INT, at, quantizeLane(x.get(NATIVE_FLOAT, at), scale));
        }
    }

    /** The lane operations of {@link VectorFixedPointConverter#quantize}, in the same order. */
    private static IntVector quantizeVector(final FloatVector x, final float scale)
    {
        final FloatVector y = x.mul(scale);
        final IntVector truncated = (IntVector)y.convertShape(VectorOperators.F2I, INTS, 0);
        final FloatVector fraction = y.sub((FloatVector)truncated.convertShape(VectorOperators.I2F, FLOATS, 0));
        final VectorMask<Integer> up = fraction.compare(VectorOperators.GE, 0.5f).cast(INTS);
        final VectorMask<Integer> down = fraction.compare(VectorOperators.LE, -0.5f).cast(INTS);
        return truncated.add(1, up).sub(1, down);
    }

    /** The lane operations of {@code ScalarFixedPointConverter.quantizeRange}. */
    private static int quantizeLane(final float x, final float scale)
    {
        final float y = x * scale;
        final int truncated = (int)y;
        final float fraction = y - (float)truncated;
        return fraction >= 0.5f ? truncated + 1 : fraction <= -0.5f ? truncated - 1 : truncated;
    }

    @Override
    public void dequantize(
        final DeviceBuffer lanes, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer floats)
    {
        scaling.requireCovers(count);
        final MemorySegment l = segment(lanes);
        final MemorySegment x = segment(floats);
        final MemorySegment e = segment(scaling.exponents());
        final int blockSize = scaling.blockSize();
        for (long b = 0, start = 0; start < count; b++, start += blockSize)
        {
            final int n = (int)Math.min(blockSize, count - start);
            final int shift = FixedPoint.shift(e.getAtIndex(NATIVE_INT, b), scaling.workers());
            final long offset = start * Float.BYTES;
            if (order == LaneOrder.NETWORK)
            {
                converter.dequantize(l, offset, n, shift, x, offset);
            }
            else
            {
                dequantizeNative(l, offset, n, Math.scalb(1.0f, -shift), x);
            }
        }
    }

    private static void dequantizeNative(
        final MemorySegment lanes, final long offset, final int n, final float inverseScale, final MemorySegment x)
    {
        final int bound = INTS.loopBound(n);
        int i = 0;
        for (; i < bound; i += INTS.length())
        {
            final long at = offset + (long)i * Integer.BYTES;
            ((FloatVector)IntVector.fromMemorySegment(INTS, lanes, at, ByteOrder.nativeOrder())
                .convertShape(VectorOperators.I2F, FLOATS, 0)).mul(inverseScale)
                .intoMemorySegment(x, at, ByteOrder.nativeOrder());
        }
        for (; i < n; i++)
        {
            final long at = offset + (long)i * Integer.BYTES;
            x.set(NATIVE_FLOAT, at, (float)lanes.get(NATIVE_INT, at) * inverseScale);
        }
    }

    @Override
    public void sumFloats(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        final MemorySegment[] s = segments(sources);
        final MemorySegment o = segment(out);
        final long bound = count - count % FLOATS.length();
        long i = 0;
        for (; i < bound; i += FLOATS.length())
        {
            final long at = i * Float.BYTES;
            FloatVector sum = FloatVector.fromMemorySegment(FLOATS, s[0], at, ByteOrder.nativeOrder());
            for (int j = 1; j < s.length; j++)
            {
                sum = sum.add(FloatVector.fromMemorySegment(FLOATS, s[j], at, ByteOrder.nativeOrder()));
            }
            sum.intoMemorySegment(o, at, ByteOrder.nativeOrder());
        }
        for (; i < count; i++)
        {
            float sum = s[0].getAtIndex(NATIVE_FLOAT, i);
            for (int j = 1; j < s.length; j++)
            {
                sum += s[j].getAtIndex(NATIVE_FLOAT, i);
            }
            o.setAtIndex(NATIVE_FLOAT, i, sum);
        }
    }

    @Override
    public void sumInts(final List<DeviceBuffer> sources, final long count, final DeviceBuffer out)
    {
        final MemorySegment[] s = segments(sources);
        final MemorySegment o = segment(out);
        final long bound = count - count % INTS.length();
        long i = 0;
        for (; i < bound; i += INTS.length())
        {
            final long at = i * Integer.BYTES;
            IntVector sum = IntVector.fromMemorySegment(INTS, s[0], at, ByteOrder.nativeOrder());
            for (int j = 1; j < s.length; j++)
            {
                sum = sum.add(IntVector.fromMemorySegment(INTS, s[j], at, ByteOrder.nativeOrder()));
            }
            sum.intoMemorySegment(o, at, ByteOrder.nativeOrder());
        }
        for (; i < count; i++)
        {
            int sum = s[0].getAtIndex(NATIVE_INT, i);
            for (int j = 1; j < s.length; j++)
            {
                sum += s[j].getAtIndex(NATIVE_INT, i);
            }
            o.setAtIndex(NATIVE_INT, i, sum);
        }
    }

    @Override
    public void reduceAndQuantize(
        final List<DeviceBuffer> sources, final long count, final BlockScaling scaling, final LaneOrder order,
        final DeviceBuffer lanes)
    {
        scaling.requireCovers(count);
        final MemorySegment[] s = segments(sources);
        final MemorySegment l = segment(lanes);
        final MemorySegment e = segment(scaling.exponents());
        final ByteOrder byteOrder = order == LaneOrder.NETWORK ? ByteOrder.BIG_ENDIAN : ByteOrder.nativeOrder();
        final ValueLayout.OfInt laneLayout = NATIVE_INT.withOrder(byteOrder);
        final int blockSize = scaling.blockSize();
        for (long b = 0, start = 0; start < count; b++, start += blockSize)
        {
            final int n = (int)Math.min(blockSize, count - start);
            final float scale = Math.scalb(1.0f, FixedPoint.shift(e.getAtIndex(NATIVE_INT, b), scaling.workers()));
            final long offset = start * Float.BYTES;
            final int bound = FLOATS.loopBound(n);
            int i = 0;
            for (; i < bound; i += FLOATS.length())
            {
                final long at = offset + (long)i * Float.BYTES;
                IntVector sum = quantizeVector(FloatVector.fromMemorySegment(FLOATS, s[0], at, ByteOrder.nativeOrder()), scale);
                for (int j = 1; j < s.length; j++)
                {
                    sum = sum.add(quantizeVector(
                        FloatVector.fromMemorySegment(FLOATS, s[j], at, ByteOrder.nativeOrder()), scale));
                }
                sum.intoMemorySegment(l, at, byteOrder);
            }
            for (; i < n; i++)
            {
                final long at = offset + (long)i * Float.BYTES;
                int sum = 0;
                for (final MemorySegment source : s)
                {
                    sum += quantizeLane(source.get(NATIVE_FLOAT, at), scale);
                }
                l.set(laneLayout, at, sum);
            }
        }
    }

    @Override
    public Fence fence()
    {
        return Fence.DONE;
    }

    @Override
    public void synchronize()
    {
    }

    @Override
    public void close()
    {
    }

    static MemorySegment segment(final DeviceBuffer buffer)
    {
        return buffer.hostSegment().orElseThrow(() -> new IllegalArgumentException(
            "the CPU reducer computes on host memory; " + buffer + " is device memory of another device"));
    }

    private static MemorySegment[] segments(final List<DeviceBuffer> buffers)
    {
        if (buffers.isEmpty())
        {
            throw new IllegalArgumentException("no source buffers");
        }
        final MemorySegment[] segments = new MemorySegment[buffers.size()];
        for (int j = 0; j < segments.length; j++)
        {
            segments[j] = segment(buffers.get(j));
        }
        return segments;
    }
}
