package org.inagg.wire;

import java.lang.foreign.MemorySegment;

import com.code_intelligence.jazzer.junit.FuzzTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the header check and decoding every receiver runs on bytes from the network (docs/fuzzing.md). The input is
 * the message itself, in memory of exactly its length, so a read past the message throws instead of reading a
 * neighbour's bytes. Invariants: {@link InaggHeader#check} never throws and gives the documented reason; a message it
 * accepts decodes, field by field and lane by lane, inside its bounds, and encodes back to the same bytes.
 * Seeds: {@code src/test/resources/org/inagg/wire/InaggHeaderFuzzTestInputs/}.
 */
class InaggHeaderFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldCheckAnyBytesAndDecodeWhatItAcceptsWithinBounds(final byte[] bytes)
    {
        final MemorySegment m = MemorySegment.ofArray(bytes);
        final int check = InaggHeader.check(m, 0, bytes.length);
        assertThat(WireCheck.describe(check)).isNotNull();
        if (bytes.length < InaggHeader.LENGTH)
        {
            assertThat(check).isEqualTo(WireCheck.TOO_SHORT);
            return;
        }
        if ((bytes[0] >>> 4 & 0xF) != InaggHeader.VERSION)
        {
            assertThat(check).isEqualTo(WireCheck.BAD_VERSION);
            return;
        }
        final int count = InaggHeader.elementCount(m, 0);
        if (bytes.length != InaggHeader.LENGTH + 4L * count)
        {
            assertThat(check).isEqualTo(WireCheck.LENGTH_MISMATCH);
            return;
        }
        assertThat(check).isEqualTo(WireCheck.OK);

        final byte[] copy = new byte[bytes.length];
        final MemorySegment c = MemorySegment.ofArray(copy);
        InaggHeader.write(c, 0, InaggHeader.type(m, 0), InaggHeader.flags(m, 0), InaggHeader.jobId(m, 0),
            InaggHeader.workerId(m, 0), InaggHeader.slotIndex(m, 0), InaggHeader.shadowCopy(m, 0),
            InaggHeader.sequence(m, 0), count, InaggHeader.blockExponent(m, 0), InaggHeader.nextExponent(m, 0),
            InaggHeader.priority(m, 0));
        InaggHeader.setStatus(c, 0, InaggHeader.status(m, 0));
        InaggHeader.setJoinLanes(c, 0, InaggHeader.joinLanes(m, 0));
        for (int i = 0; i < count; i++)
        {
            InaggHeader.setElement(c, 0, i, InaggHeader.element(m, 0, i));
        }
        assertThat(copy).as("decode then encode gives the same bytes").isEqualTo(bytes);
        assertThat(RejectReason.describe(InaggHeader.status(m, 0))).isNotNull();
    }
}
