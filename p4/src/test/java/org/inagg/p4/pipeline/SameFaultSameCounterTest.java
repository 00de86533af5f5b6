package org.inagg.p4.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.ToLongFunction;

import org.inagg.agent.CounterDescriptor;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.EsaJobConfig;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.esa.ParameterServer;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.esa.ServerJobConfig;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.p4.testing.CaptureTransport;
import org.inagg.transport.MessageHandler;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The same fault gets the same counter on every switch-side node (issue 23): the software switch, the ESA switch and
 * the parameter server (answering JOINs of direct workers) each get the same faulty messages and must count each under
 * the same {@link NodeCounter} name, and nothing else.
 */
@Timeout(30)
class SameFaultSameCounterTest
{
    private static final int JOB = 3;
    private static final int WORKERS = 2;
    private static final int[] PEERS = {10, 11};
    private static final int STRANGER = 66;

    private record Node(String name, MessageHandler handler, ToLongFunction<NodeCounter> counter)
    {
    }

    private static <E extends Enum<E> & CounterDescriptor> ToLongFunction<NodeCounter> reader(final Class<E> family,
        final ToLongFunction<E> read)
    {
        return name -> read.applyAsLong(NodeCounters.of(family, name));
    }

    private static List<Node> nodes()
    {
        final SoftwareSwitch sw = new SoftwareSwitch(new CaptureTransport(), new CounterRegistry(64), 16);
        sw.addJob(new SwitchJobConfig(JOB, WORKERS, 8, 4, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, PEERS));
        sw.doWork();
        final EsaSwitch esa = new EsaSwitch(new CaptureTransport(), new CounterRegistry(64),
            new EsaSwitchSettings(4, 4, 4, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER, 16));
        esa.addJob(new EsaJobConfig(JOB, WORKERS, 4, 8, 0, PEERS, 1, 0));
        esa.applyControl();
        final ParameterServer ps = new ParameterServer(new CaptureTransport(), new CounterRegistry(64), 16, 16);
        ps.addJob(new ServerJobConfig(JOB, WORKERS, PEERS, 1, false, 8, 4));
        ps.applyControl();
        return List.of(new Node("software switch", sw, reader(SwitchCounter.class, sw::counter)),
            new Node("ESA switch", esa, reader(EsaCounter.class, esa::counter)),
            new Node("parameter server", ps, reader(ServerCounter.class, ps::counter)));
    }

    private static byte[] join(final int job, final int worker)
    {
        final byte[] bytes = new byte[InaggHeader.LENGTH];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, job, worker, WORKERS, InaggHeader.ANY_SESSION, 1);
        return bytes;
    }

    private static void assertCountedOnce(final Node node, final byte[] message, final int peer,
        final NodeCounter expected)
    {
        final long[] before = new long[NodeCounter.values().length];
        for (final NodeCounter c : NodeCounter.values())
        {
            before[c.ordinal()] = node.counter().applyAsLong(c);
        }
        CaptureTransport.deliver(node.handler(), message, peer);
        for (final NodeCounter c : NodeCounter.values())
        {
            final long delta = node.counter().applyAsLong(c) - before[c.ordinal()];
            final long want = c == expected || c == NodeCounter.RECEIVED ? 1 : 0;
            assertThat(delta).as("%s: %s after a message that is %s", node.name(), c, expected).isEqualTo(want);
        }
    }

    @Test
    void shouldCountEachFaultUnderTheSameNameOnEveryNode()
    {
        final byte[] unsupported = CaptureTransport.aggregate(JOB, 0, 0, 0, 3 << InaggHeader.COLLECTIVE_SHIFT, 1, 2, 3,
            4);
        for (final Node node : nodes())
        {
            assertCountedOnce(node, join(JOB, 0), STRANGER, NodeCounter.DROP_SOURCE_MISMATCH);
            assertCountedOnce(node, new byte[] {0x10, 0, 0, 3, 0}, PEERS[0], NodeCounter.DROP_MALFORMED);
            assertCountedOnce(node, CaptureTransport.aggregate(JOB + 1, 0, 0, 0, 0, 1, 2, 3, 4), PEERS[0],
                NodeCounter.DROP_UNKNOWN_JOB);
            assertCountedOnce(node, CaptureTransport.aggregate(JOB, 5, 0, 0, 0, 1, 2, 3, 4), PEERS[0],
                NodeCounter.DROP_UNKNOWN_WORKER);
            assertCountedOnce(node, unsupported, PEERS[0], NodeCounter.DROP_UNSUPPORTED);
            assertCountedOnce(node, join(JOB, 0), PEERS[0], NodeCounter.JOINS);
            assertCountedOnce(node, join(JOB + 1, 0), PEERS[0], NodeCounter.REJECTS);
        }
    }

    @Test
    void shouldRefuseACounterFamilyThatLacksASharedName()
    {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> new NodeCounters<>(new CounterRegistry(64), Partial.class, "test"))
            .withMessageContaining("Partial lacks the node counter DROP_MALFORMED");
    }

    private enum Partial implements CounterDescriptor
    {
        RECEIVED;

        @Override
        public int typeId()
        {
            return 999;
        }

        @Override
        public String label()
        {
            return "received";
        }

        @Override
        public String family()
        {
            return "test";
        }
    }
}
