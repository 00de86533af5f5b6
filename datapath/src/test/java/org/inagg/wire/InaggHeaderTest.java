package org.inagg.wire;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class InaggHeaderTest
{
    @Property
    void shouldRoundTripEveryField(
        @ForAll @IntRange(min = 0, max = 15) final int type,
        @ForAll @IntRange(min = 0, max = 255) final int flags,
        @ForAll @IntRange(min = 0, max = 65535) final int job,
        @ForAll @IntRange(min = 0, max = 65535) final int worker,
        @ForAll @IntRange(min = 0, max = 32767) final int slot,
        @ForAll @IntRange(min = 0, max = 1) final int copy,
        @ForAll final int sequence,
        @ForAll @IntRange(min = 0, max = 65535) final int count,
        @ForAll @IntRange(min = -128, max = 127) final int blockExponent,
        @ForAll @IntRange(min = -128, max = 127) final int nextExponent,
        @ForAll @IntRange(min = 0, max = 255) final int priority)
    {
        final MemorySegment m = Arena.ofAuto().allocate(64);
        InaggHeader.write(m, 3, type, flags, job, worker, slot, copy, sequence, count, blockExponent, nextExponent,
            priority);
        assertThat(InaggHeader.version(m, 3)).isEqualTo(InaggHeader.VERSION);
        assertThat(InaggHeader.type(m, 3)).isEqualTo(type);
        assertThat(InaggHeader.flags(m, 3)).isEqualTo(flags);
        assertThat(InaggHeader.jobId(m, 3)).isEqualTo(job);
        assertThat(InaggHeader.workerId(m, 3)).isEqualTo(worker);
        assertThat(InaggHeader.slotIndex(m, 3)).isEqualTo(slot);
        assertThat(InaggHeader.shadowCopy(m, 3)).isEqualTo(copy);
        assertThat(InaggHeader.sequence(m, 3)).isEqualTo(sequence);
        assertThat(InaggHeader.elementCount(m, 3)).isEqualTo(count);
        assertThat(InaggHeader.blockExponent(m, 3)).isEqualTo(blockExponent);
        assertThat(InaggHeader.nextExponent(m, 3)).isEqualTo(nextExponent);
        assertThat(InaggHeader.priority(m, 3)).isEqualTo(priority);
        assertThat(InaggHeader.status(m, 3)).isZero();
    }

    @Test
    void shouldLayOutBytesExactlyAsTheDiagramInNetworkOrder()
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.messageLength(2));
        InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.FLAG_RETRANSMIT, 0x1234, 0xABCD, 0x0102, 1,
            0x0A0B0C0D, 2, -3, 5, 9);
        InaggHeader.setElement(m, 0, 0, 0x11223344);
        InaggHeader.setElement(m, 0, 1, -2);
        final byte[] expected = {
            0x11, 0x02, 0x12, 0x34,                          // version 1 | type 1, flags, job id
            (byte)0xAB, (byte)0xCD, (byte)0x81, 0x02,        // worker id, S=1 | slot 0x0102
            0x0A, 0x0B, 0x0C, 0x0D,                          // sequence
            0x00, 0x02, (byte)0xFD, 0x05,                    // element count, block exponent -3, next exponent 5
            0x09, 0x00, 0x00, 0x00,                          // priority, status, reserved
            0x11, 0x22, 0x33, 0x44,                          // lane 0
            (byte)0xFF, (byte)0xFF, (byte)0xFF, (byte)0xFE}; // lane 1
        assertThat(m.toArray(ValueLayout.JAVA_BYTE)).containsExactly(expected);
        assertThat(InaggHeader.element(m, 0, 1)).isEqualTo(-2);
    }

    @Test
    void shouldLayOutAJoinShowingACredentialAsTheDiagramInWireFormatMd()
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.joinLength(0x0123_4567_89AB_CDEFL));
        InaggHeader.writeJoin(m, 0, 0x1234, 0x0005, 4, 0x0102, 0xA1B2C3D4L, 0x0123_4567_89AB_CDEFL);
        final byte[] expected = {
            0x12, 0x00, 0x12, 0x34,                                  // version 1 | type JOIN, flags, job id
            0x00, 0x05, 0x00, 0x00,                                  // worker id, slot 0
            0x00, 0x00, 0x00, 0x04,                                  // the worker count it was configured with
            0x00, 0x02, (byte)0xA1, (byte)0xB2,                      // Element Count 2, incarnation ...
            (byte)0xC3, (byte)0xD4, 0x01, 0x02,                      // ... incarnation, session asked for
            0x01, 0x23, 0x45, 0x67,                                  // credential, high 32 bits (lane 0)
            (byte)0x89, (byte)0xAB, (byte)0xCD, (byte)0xEF};         // credential, low 32 bits (lane 1)
        assertThat(m.toArray(ValueLayout.JAVA_BYTE)).containsExactly(expected);
        assertThat(InaggHeader.check(m, 0, expected.length)).isEqualTo(WireCheck.OK);
        assertThat(InaggHeader.joinCredential(m, 0)).isEqualTo(0x0123_4567_89AB_CDEFL);
        assertThat(InaggHeader.joinIncarnation(m, 0)).isEqualTo(0xA1B2C3D4L);
        assertThat(InaggHeader.session(m, 0)).isEqualTo(0x0102);
        // no credential: the 20-byte JOIN of before, which shows none
        final MemorySegment none = Arena.ofAuto().allocate(InaggHeader.joinLength(InaggHeader.NO_CREDENTIAL));
        InaggHeader.writeJoin(none, 0, 0x1234, 5, 4, 0, 7L, InaggHeader.NO_CREDENTIAL);
        assertThat(none.byteSize()).isEqualTo(InaggHeader.LENGTH);
        assertThat(InaggHeader.elementCount(none, 0)).isZero();
        assertThat(InaggHeader.joinCredential(none, 0)).isEqualTo(InaggHeader.NO_CREDENTIAL);
    }

    @Test
    void shouldRejectShortWrongVersionAndMislengthMessages()
    {
        final MemorySegment m = Arena.ofAuto().allocate(InaggHeader.messageLength(4));
        InaggHeader.write(m, 0, MessageType.AGGREGATE, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0);
        assertThat(InaggHeader.check(m, 0, InaggHeader.messageLength(4))).isEqualTo(WireCheck.OK);
        assertThat(InaggHeader.check(m, 0, InaggHeader.LENGTH - 1)).isEqualTo(WireCheck.TOO_SHORT);
        assertThat(InaggHeader.check(m, 0, InaggHeader.messageLength(3))).isEqualTo(WireCheck.LENGTH_MISMATCH);
        m.set(ValueLayout.JAVA_BYTE, 0, (byte)0x21);
        assertThat(InaggHeader.check(m, 0, InaggHeader.messageLength(4))).isEqualTo(WireCheck.BAD_VERSION);
        assertThat(WireCheck.describe(WireCheck.BAD_VERSION)).contains("version");
    }

    @Test
    void shouldFitTheLargestPacketInA1500ByteMtu()
    {
        assertThat(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU).isEqualTo(363);
        assertThat(20 + 8 + InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)).isLessThanOrEqualTo(1500);
        assertThat(20 + 8 + InaggHeader.messageLength(InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + 1)).isGreaterThan(1500);
    }
}
