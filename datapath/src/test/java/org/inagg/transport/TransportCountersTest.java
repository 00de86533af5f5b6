package org.inagg.transport;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.status.CountersReader;
import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.transport.TransportCounter.BYTES_RECEIVED;
import static org.inagg.transport.TransportCounter.BYTES_SENT;
import static org.inagg.transport.TransportCounter.CLAIMS_REFUSED;
import static org.inagg.transport.TransportCounter.FROM_STRANGERS;
import static org.inagg.transport.TransportCounter.MESSAGES_RECEIVED;
import static org.inagg.transport.TransportCounter.MESSAGES_SENT;
import static org.inagg.transport.TransportTest.send;

/**
 * Every transport counts the same {@link TransportCounter}s: messages and bytes each way, refusals and drops by reason;
 * decorators answer their inner transport's; a node moves them into its counters file. (The DPDK transport's are
 * checked in {@code DpdkTransportTest}.)
 */
@Timeout(30)
class TransportCountersTest
{
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    @Test
    void shouldCountInProcessMessagesAndBytesEachWayAndClaimsAFullRingRefused()
    {
        final InProcessNetwork network = new InProcessNetwork(2, 1024, 100);
        final Transport sender = network.endpoint(1);
        final Transport receiver = network.endpoint(0);
        int sent = 0;
        while (send(sender, 0, new byte[40]))
        {
            sent++;
        }
        assertThat(sent).isGreaterThan(3);
        assertThat(send(sender, 0, new byte[40])).isFalse();
        assertThat(sender.counters().get(MESSAGES_SENT)).isEqualTo(sent);
        assertThat(sender.counters().get(BYTES_SENT)).isEqualTo(40L * sent);
        assertThat(sender.counters().get(CLAIMS_REFUSED)).isEqualTo(2);
        assertThat(receiver.poll((m, o, length, peer) -> { }, 3)).isEqualTo(3);
        assertThat(receiver.counters().get(MESSAGES_RECEIVED)).isEqualTo(3);
        assertThat(receiver.counters().get(BYTES_RECEIVED)).isEqualTo(120);
        assertThat(receiver.counters().get(MESSAGES_SENT)).isZero();
        assertThat(sender.counters().get(MESSAGES_RECEIVED)).isZero();
    }

    @ParameterizedTest(name = "batch I/O {0}")
    @ValueSource(booleans = {true, false})
    void shouldCountUdpMessagesAndBytesEachWayWithEitherIo(final boolean batch)
    {
        System.setProperty(UdpTransport.BATCH_PROP_NAME, Boolean.toString(batch));
        try (UdpTransport receiver = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 256, 16);
            UdpTransport sender = UdpTransport.open(ANY_LOOPBACK, List.of(receiver.localAddress()), 4, 256, 16))
        {
            for (int i = 0; i < 10; i++)
            {
                assertThat(send(sender, 0, new byte[i == 9 ? 8 : 100])).isTrue();
            }
            assertThat(sender.counters().get(MESSAGES_SENT)).as("counted when committed").isEqualTo(10);
            assertThat(sender.counters().get(BYTES_SENT)).isEqualTo(908);
            int flushed = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (flushed < 10 && System.nanoTime() - deadline < 0)
            {
                flushed += sender.flush();
            }
            final List<Integer> lengths = new ArrayList<>();
            while (lengths.size() < 10 && System.nanoTime() - deadline < 0)
            {
                receiver.awaitReceive(TimeUnit.MILLISECONDS.toNanos(10));
                receiver.poll((m, o, length, peer) -> lengths.add(length), 16);
            }
            assertThat(lengths).hasSize(10);
            assertThat(receiver.counters().get(MESSAGES_RECEIVED)).isEqualTo(10);
            assertThat(receiver.counters().get(BYTES_RECEIVED)).isEqualTo(908);
            assertThat(receiver.counters().get(FROM_STRANGERS)).as("learned, not beyond the table").isZero();
            assertThat(sender.counters().get(TransportCounter.DROP_UNSENT)).isZero();
        }
        finally
        {
            System.clearProperty(UdpTransport.BATCH_PROP_NAME);
        }
    }

    @Test
    void shouldMoveTheCountsIntoARegistryWithTheirNamesAndCountThereFromThenOn()
    {
        final InProcessNetwork network = new InProcessNetwork(2, 1024, 100);
        final Transport sender = network.endpoint(1);
        assertThat(send(sender, 0, new byte[24])).isTrue();
        final CounterRegistry registry = new CounterRegistry(TransportCounter.values().length);
        final TransportCounters registered = TransportCounters.in(registry, "worker", 7, 1);
        sender.countInto(registered);
        assertThat(send(sender, 0, new byte[16])).isTrue();

        assertThat(sender.counters()).isSameAs(registered);
        assertThat(registry.sum(MESSAGES_SENT.typeId())).as("the one before and the one after").isEqualTo(2);
        assertThat(registry.sum(BYTES_SENT.typeId())).isEqualTo(40);
        final List<String> names = new ArrayList<>();
        final CountersReader reader = registry.reader();
        reader.forEach((id, type, key, label) ->
        {
            final CounterKey k = CounterKey.read(type, key, 0);
            names.add(k.metricName() + " " + k.jobId() + "/" + k.workerId() + " " + label);
        });
        assertThat(names).hasSize(TransportCounter.values().length)
            .contains("inagg_transport_messages_sent 7/1 worker transport: messages sent")
            .contains("inagg_transport_claims_refused 7/1 worker transport: sends refused: transport full");
    }

    @Test
    void shouldAnswerTheInnerTransportsCountersThroughADecorator()
    {
        final InProcessNetwork network = new InProcessNetwork(2, 1024, 100);
        final Transport inner = network.endpoint(1);
        final Transport lossy = new FaultInjectingTransport(inner, FaultConfig.lossy(0.1, 1));
        assertThat(lossy.counters()).isSameAs(inner.counters());
        final TransportCounters registered = TransportCounters.in(new CounterRegistry(16), "switch", CounterKey.NONE,
            CounterKey.NONE);
        lossy.countInto(registered);
        assertThat(inner.counters()).isSameAs(registered);
    }

    @Test
    void shouldCountNothingOnATransportThatDoesNotCount()
    {
        final Transport fake = new DiscardTransport(64);
        assertThat(send(fake, 0, new byte[8])).isTrue();
        assertThat(fake.counters()).isSameAs(TransportCounters.NOT_COUNTED);
        assertThat(fake.counters().get(MESSAGES_SENT)).isZero();
        assertThat(fake.counters().describe()).isEqualTo("nothing counted");
    }
}
