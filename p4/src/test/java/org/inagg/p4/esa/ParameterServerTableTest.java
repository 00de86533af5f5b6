package org.inagg.p4.esa;

import java.lang.foreign.MemorySegment;
import java.util.List;

import org.inagg.agent.CounterRegistry;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.p4.testing.CaptureTransport.deliver;

/**
 * The block table against streams the slot protocol really produces: packet v of a job with A slots goes to slot
 * {@code v mod A}, round {@code v / A}, shadow copy {@code round & 1}. Two workers at peers 100 and 101 join the
 * server directly; the table is smaller than the span of sequences in flight.
 */
class ParameterServerTableTest
{
    private static final int JOB = 1;
    private static final int SLOTS = 3;

    private final CaptureTransport transport = new CaptureTransport();
    private ParameterServer server;

    private void start(final int retainedResults)
    {
        server = new ParameterServer(transport, new CounterRegistry(64), 16, retainedResults);
        server.addJob(new ServerJobConfig(JOB, 2, new int[] {100, 101}, 0, false, SLOTS, 4));
        server.applyControl();
    }

    /** Worker {@code worker}'s packet {@code v} (int32, one lane = {@code value}) as its agent sends it. */
    private static byte[] packet(final int worker, final int v, final int value, final boolean retransmission)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(1)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, MessageType.AGGREGATE,
            InaggHeader.FLAG_INT32 | (retransmission ? InaggHeader.FLAG_RETRANSMIT : 0), JOB, worker, v % SLOTS,
            (v / SLOTS) & 1, v, 1, 0, InaggHeader.NO_EXPONENT, 0);
        InaggHeader.setElement(m, 0, 0, value);
        return bytes;
    }

    @Test
    void shouldNotEvictABlockStillWaitingForAWorkerWhenAnotherSlotRunsAheadByTheTableLength()
    {
        start(4);
        // Worker 1's packet 0 is lost; slots 1 and 2 go on (each needs only its own previous round).
        deliver(server, packet(0, 0, 1, false), 100);
        for (final int v : new int[] {1, 2, 4, 5})
        {
            deliver(server, packet(0, v, 1, false), 100);
            deliver(server, packet(1, v, 1, false), 101);
        }
        transport.drain();
        // Packet 4 (slot 1, round 1) maps to the entry of packet 0 in a 4-entry sequence table.
        deliver(server, packet(1, 0, 10, true), 101);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).as("block 0 completes with worker 1's retransmission").hasSize(2);
        assertThat(InaggHeader.sequence(out.get(0).segment(), 0)).isZero();
        assertThat(out.get(0).lanes()).containsExactly(11);
        assertThat(server.counter(ServerCounter.EVICTED)).isZero();
    }

    @Test
    void shouldStillAnswerALostResultWhenAnotherSlotRunsAheadByTheTableLength()
    {
        start(4);
        deliver(server, packet(0, 0, 1, false), 100);
        deliver(server, packet(1, 0, 2, false), 101);
        // Block 0 is complete; its result to worker 1 is lost. Slot 1 goes on to packet 4.
        for (final int v : new int[] {1, 2, 4, 5})
        {
            deliver(server, packet(0, v, 1, false), 100);
            deliver(server, packet(1, v, 1, false), 101);
        }
        transport.drain();
        deliver(server, packet(1, 0, 2, true), 101);

        final List<CaptureTransport.Sent> out = transport.drain();
        assertThat(out).as("the retransmission is answered from the retained result").hasSize(1);
        assertThat(out.get(0).peer()).isEqualTo(101);
        assertThat(InaggHeader.sequence(out.get(0).segment(), 0)).isZero();
        assertThat(out.get(0).lanes()).containsExactly(3);
    }
}
