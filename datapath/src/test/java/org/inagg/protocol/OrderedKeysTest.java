package org.inagg.protocol;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.inagg.wire.InaggHeader;

import static org.assertj.core.api.Assertions.assertThat;

/** Float MIN and MAX through int32 keys: the keys order as the floats do, and map back to the same bits. */
class OrderedKeysTest
{
    @Property
    void shouldOrderKeysAsTheFloatsAreOrdered(@ForAll final float a, @ForAll final float b)
    {
        if (Float.isNaN(a) || Float.isNaN(b))
        {
            return;
        }
        final int ka = OrderedKeys.key(Float.floatToRawIntBits(a));
        final int kb = OrderedKeys.key(Float.floatToRawIntBits(b));
        // Float.compare orders -0.0 below +0.0, as the keys do.
        assertThat(Integer.signum(Integer.compare(ka, kb))).isEqualTo(Integer.signum(Float.compare(a, b)));
        assertThat(Float.intBitsToFloat(OrderedKeys.key(Math.min(ka, kb)))).isEqualTo(Math.min(a, b));
        assertThat(Float.intBitsToFloat(OrderedKeys.key(Math.max(ka, kb)))).isEqualTo(Math.max(a, b));
    }

    @Property
    void shouldEncodeAndDecodeEveryFloatsBitsExactly(@ForAll final float[] values)
    {
        final MemorySegment floats = Arena.ofAuto().allocate(Math.max(1, values.length) * (long)Float.BYTES);
        MemorySegment.copy(values, 0, floats, ValueLayout.JAVA_FLOAT, 0, values.length);
        final MemorySegment message = Arena.ofAuto().allocate(InaggHeader.messageLength(values.length));
        final MemorySegment back = Arena.ofAuto().allocate(floats.byteSize());
        OrderedKeys.encode(floats, 0, values.length, message, InaggHeader.PAYLOAD_OFFSET);
        OrderedKeys.decode(message, InaggHeader.PAYLOAD_OFFSET, values.length, back, 0);
        assertThat(back.asSlice(0, values.length * (long)Float.BYTES).toArray(ValueLayout.JAVA_INT))
            .isEqualTo(floats.asSlice(0, values.length * (long)Float.BYTES).toArray(ValueLayout.JAVA_INT));
    }
}
