package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.WireCheck;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the decoding of a PARTIAL ({@link EsaWire}) as the parameter server validates it (docs/fuzzing.md). Input: one
 * byte for the job's worker count (1..128), then the message, in memory of exactly its length. Invariants: for a
 * message that passes the header check and the server's PARTIAL checks (bitmap words for the job's workers, no
 * negative lane count, no bit past the last worker), every lane and bitmap word decodes within bounds, the bitmap names
 * no worker past the job's, and the fields encode back to the same bytes; nothing throws either way.
 */
class EsaWireFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldDecodeWhatTheServerAcceptsWithinBoundsAndEncodeItBack(final byte[] data)
    {
        if (data.length < 1)
        {
            return;
        }
        final int workers = 1 + (data[0] & 0x7F);
        final byte[] bytes = Arrays.copyOfRange(data, 1, data.length);
        final MemorySegment m = MemorySegment.ofArray(bytes);
        if (InaggHeader.check(m, 0, bytes.length) != WireCheck.OK || InaggHeader.type(m, 0) != EsaWire.TYPE_PARTIAL)
        {
            return;
        }
        final int words = EsaWire.partialBitmapWords(m, 0);
        final int lanes = EsaWire.partialLanes(m, 0);
        // The server's checks, in its order (ParameterServer#partial): they must make every later read safe.
        final int tail = workers & 31;
        if (words != EsaWire.bitmapWords(workers) || lanes < 0
            || (tail != 0 && EsaWire.partialBitmapWord(m, 0, words - 1) >>> tail != 0))
        {
            return;
        }
        final int[] bitmap = new int[words];
        for (int k = 0; k < words; k++)
        {
            bitmap[k] = EsaWire.partialBitmapWord(m, 0, k);
        }
        for (int w = 0; w < 32 * words; w++)
        {
            final boolean set = (bitmap[w >>> 5] & 1 << (w & 31)) != 0;
            if (w < workers)
            {
                assertThat(EsaWire.partialHasWorker(m, 0, w)).isEqualTo(set);
            }
            else
            {
                assertThat(set).as("bit of worker %d of a %d-worker job", w, workers).isFalse();
            }
        }
        final int collective = InaggHeader.collective(m, 0);
        final byte[] copy = new byte[EsaWire.partialLength(lanes, workers, collective)];
        assertThat(copy.length).isEqualTo(bytes.length);
        final MemorySegment c = MemorySegment.ofArray(copy);
        EsaWire.writePartialHeader(c, 0, InaggHeader.flags(m, 0), InaggHeader.jobId(m, 0), InaggHeader.session(m, 0),
            InaggHeader.slotField(m, 0), InaggHeader.sequence(m, 0), lanes, words, InaggHeader.blockExponent(m, 0),
            InaggHeader.nextExponent(m, 0), InaggHeader.priority(m, 0), InaggHeader.status(m, 0));
        for (int k = 0; k < lanes; k++)
        {
            InaggHeader.setElement(c, 0, k, InaggHeader.element(m, 0, k));
        }
        for (int k = 0; k < words; k++)
        {
            EsaWire.setPartialBitmapWord(c, 0, lanes, k, bitmap[k]);
        }
        if (collective != InaggHeader.COLLECTIVE_ALL_REDUCE)
        {
            EsaWire.setPartialOwner(c, 0, EsaWire.partialOwner(m, 0));
        }
        assertThat(copy).as("decode then encode gives the same bytes").isEqualTo(bytes);
    }
}
