package org.inagg.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The blocking idle wait on a UDP socket, the socket buffer report and the bind errors. */
class UdpTransportWaitTest
{
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    @Test
    @Timeout(30)
    void shouldWakeFromAWaitAsSoonAsADatagramArrives() throws Exception
    {
        try (UdpTransport receiver = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4);
            UdpTransport sender = UdpTransport.open(ANY_LOOPBACK, List.of(receiver.localAddress()), 4, 64, 4))
        {
            final Thread send = Thread.ofPlatform().start(() ->
            {
                sleep(200);
                final long offset = sender.claim(0, 8);
                sender.txMemory().set(java.lang.foreign.ValueLayout.JAVA_LONG, offset, 42L);
                sender.commit();
                sender.flush();
            });
            final long start = System.nanoTime();
            // A 20 s wait that must end with the datagram, not the timeout (the test's own limit is 30 s).
            assertThat(receiver.awaitReceive(TimeUnit.SECONDS.toNanos(20))).isTrue();
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(15));
            final long[] received = new long[1];
            assertThat(receiver.poll((MemorySegment m, long o, int length, int peer) -> received[0] = m.get(
                java.lang.foreign.ValueLayout.JAVA_LONG, o), 8)).isEqualTo(1);
            assertThat(received[0]).isEqualTo(42L);
            send.join();
        }
    }

    @Test
    @Timeout(30)
    void shouldReturnFromAWaitAfterTheTimeoutWhenNothingArrives()
    {
        try (UdpTransport receiver = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4))
        {
            final long start = System.nanoTime();
            assertThat(receiver.awaitReceive(TimeUnit.MILLISECONDS.toNanos(50))).isTrue();
            // A lower bound only (a loaded machine may wake it late): it waited, it did not just return.
            assertThat(System.nanoTime() - start).as("waited out the 50 ms")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(45));
            assertThat(receiver.poll((m, o, length, peer) -> { }, 8)).isZero();
        }
    }

    @Test
    @Timeout(30)
    void shouldNotWaitWhileSendsAreQueued()
    {
        try (UdpTransport receiver = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4);
            UdpTransport sender = UdpTransport.open(ANY_LOOPBACK, List.of(receiver.localAddress()), 4, 64, 4))
        {
            assertThat(sender.claim(0, 8)).isNotEqualTo(Transport.CLAIM_FAILED);
            sender.commit();
            assertThat(sender.awaitReceive(TimeUnit.SECONDS.toNanos(20))).as("a queued send is retried first")
                .isFalse();
            assertThat(sender.flush()).isEqualTo(1);
        }
    }

    @Test
    void shouldSayThatTransportsWithoutASocketCannotWait()
    {
        assertThat(new DiscardTransport(64).awaitReceive(TimeUnit.MILLISECONDS.toNanos(1))).isFalse();
    }

    @Test
    @Timeout(30)
    void shouldParkWhenTheTransportCannotWait()
    {
        final WaitLog transport = new WaitLog(false);
        final TransportWaitIdleStrategy idle = (TransportWaitIdleStrategy)IdleStrategies.byName("block:1000000",
            transport);
        final long start = System.nanoTime();
        for (int i = 0; i < 100; i++)
        {
            idle.idle(0);
        }
        // 16 spins, then parks of 1 us doubling to the 1 ms wait: at least 70 ms in all (a lower bound: a loaded
        // machine parks longer); spinning alone would take microseconds.
        assertThat(System.nanoTime() - start).as("parked").isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(transport.waits).as("asked the transport every time").hasSize(100);
        assertThat(idle.alias()).isEqualTo("block");
    }

    @Test
    void shouldWaitOnTheTransportOneMillisecondDoublingUpToTheLongestAndAfreshAfterWork()
    {
        final WaitLog transport = new WaitLog(true);
        final TransportWaitIdleStrategy idle = (TransportWaitIdleStrategy)IdleStrategies.byName("block:4000000",
            transport);
        for (int i = 0; i < 5; i++)
        {
            idle.idle(0);
        }
        idle.idle(1);
        idle.idle(0);
        final long ms = TimeUnit.MILLISECONDS.toNanos(1);
        assertThat(transport.waits).containsExactly(ms, 2 * ms, 4 * ms, 4 * ms, 4 * ms, ms);
    }

    /** A transport that records each wait asked of it, and waits (answers true) or cannot (false). */
    private static final class WaitLog extends DiscardTransport
    {
        final List<Long> waits = new java.util.ArrayList<>();
        final boolean canWait;

        WaitLog(final boolean canWait)
        {
            super(64);
            this.canWait = canWait;
        }

        @Override
        public boolean awaitReceive(final long timeoutNs)
        {
            waits.add(timeoutNs);
            return canWait;
        }
    }

    @Test
    void shouldRefuseABadBlockingWait()
    {
        assertThatThrownBy(() -> IdleStrategies.byName("block:0", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("positive");
        assertThatThrownBy(() -> IdleStrategies.byName("block:x", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("bad wait");
    }

    @Test
    void shouldReportTheSocketBuffersTheKernelGranted()
    {
        try (UdpTransport transport = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4))
        {
            assertThat(transport.receiveBufferBytes()).isPositive();
            assertThat(transport.sendBufferBytes()).isPositive();
            assertThat(transport.describeBuffers()).contains("receive").contains("send")
                .contains(String.format("%,d", transport.receiveBufferBytes()));
        }
    }

    @Test
    void shouldNameThePortWhenItIsInUse()
    {
        try (UdpTransport first = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 64, 4))
        {
            final InetSocketAddress taken = first.localAddress();
            assertThatThrownBy(() -> UdpTransport.open(taken, List.of(), 4, 64, 4))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(Integer.toString(taken.getPort()))
                .hasMessageContaining("--bind");
        }
    }

    @Test
    @Timeout(30)
    void shouldCarryBurstsIntactWithBatchCallsGsoAndGro() throws Exception
    {
        exchangeBurst(true);
    }

    @Test
    @Timeout(30)
    void shouldCarryBurstsIntactWithOneCallPerDatagram() throws Exception
    {
        exchangeBurst(false);
    }

    /**
     * 40 messages of 1,056 bytes, then a 40-byte one and 3 more of 1,056, to one peer, each tagged with its index:
     * runs of equal lengths travel as GSO super-datagrams and may come back GRO-coalesced; every message must arrive
     * once, whole, in order, from the right peer.
     */
    private static void exchangeBurst(final boolean batch) throws Exception
    {
        System.setProperty(UdpTransport.BATCH_PROP_NAME, Boolean.toString(batch));
        try (UdpTransport receiver = UdpTransport.open(ANY_LOOPBACK, List.of(), 4, 1056, 64);
            UdpTransport sender = UdpTransport.open(ANY_LOOPBACK, List.of(receiver.localAddress()), 4, 1056, 64))
        {
            final boolean linux = System.getProperty("os.name", "").startsWith("Linux");
            assertThat(sender.describeIo()).contains(batch && linux ? "sendmmsg" : "one datagram per system call");
            final int messages = 44;
            for (int i = 0; i < messages; i++)
            {
                final int length = i == 40 ? 40 : 1056;
                final long offset = sender.claim(0, length);
                assertThat(offset).isNotEqualTo(Transport.CLAIM_FAILED);
                final MemorySegment m = sender.txMemory();
                for (int b = 0; b < length; b += Integer.BYTES)
                {
                    m.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, offset + b, i * 10_000 + b);
                }
                sender.commit();
            }
            int sent = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sent < messages && System.nanoTime() - deadline < 0)
            {
                sent += sender.flush();
            }
            assertThat(sent).isEqualTo(messages);
            final List<String> problems = new java.util.ArrayList<>();
            final int[] next = {0};
            while (next[0] < messages && System.nanoTime() - deadline < 0)
            {
                receiver.awaitReceive(TimeUnit.MILLISECONDS.toNanos(10));
                receiver.poll((MemorySegment m, long o, int length, int peer) ->
                {
                    final int i = next[0]++;
                    if (length != (i == 40 ? 40 : 1056) || peer != 0)
                    {
                        problems.add("message " + i + ": length " + length + ", peer " + peer);
                    }
                    for (int b = 0; b < length; b += Integer.BYTES)
                    {
                        if (m.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, o + b) != i * 10_000 + b)
                        {
                            problems.add("message " + i + ": wrong bytes at " + b);
                            break;
                        }
                    }
                }, 64);
            }
            assertThat(problems).isEmpty();
            assertThat(next[0]).isEqualTo(messages);
            assertThat(receiver.peerAddress(0).getPort()).isEqualTo(sender.localAddress().getPort());
        }
        finally
        {
            System.clearProperty(UdpTransport.BATCH_PROP_NAME);
        }
    }

    private static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
