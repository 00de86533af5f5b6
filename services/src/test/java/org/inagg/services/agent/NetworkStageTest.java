package org.inagg.services.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.UdpTransport;
import org.inagg.wire.InaggHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NetworkStageTest
{
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    /**
     * Two hosts of 2 ranks each (ranks 0, 1 on host 0; 2, 3 on host 1) through a software switch: a reduce-scatter
     * round of parts brings each host only its ranks' parts (the other parts stay as the host's own in-host sum), an
     * all-gather round fills in the other host's parts, a MIN round takes the minimum.
     */
    @Test
    @Timeout(60)
    void shouldBringEachHostOnlyItsPartsOfAReduceScatterAndTheOthersOfAnAllGather() throws Exception
    {
        final int part = 100;
        final int words = 4 * part;
        try (SwitchOnThread sw = SwitchOnThread.start();
             Arena arena = Arena.ofShared();
             NetworkStage a = stage(sw.address(), 0);
             NetworkStage b = stage(sw.address(), 1))
        {
            final MemorySegment[] data = {arena.allocate(4L * words), arena.allocate(4L * words)};
            for (int h = 0; h < 2; h++)
            {
                for (int i = 0; i < words; i++)
                {
                    data[h].setAtIndex(INT, i, (h + 1) * 1000 + i);
                }
            }
            run(a, b, data, new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_INT32, words, words,
                0, 0, part, 0));
            for (int h = 0; h < 2; h++)
            {
                for (int i = 0; i < words; i++)
                {
                    final boolean mine = i / part / 2 == h;
                    assertThat(data[h].getAtIndex(INT, i)).as("host %d word %d", h, i)
                        .isEqualTo(mine ? 3000 + 2 * i : (h + 1) * 1000 + i);
                }
            }
            for (int h = 0; h < 2; h++)
            {
                for (int i = 0; i < words; i++)
                {
                    data[h].setAtIndex(INT, i, i / part / 2 == h ? -i : 0);
                }
            }
            run(a, b, data, new CollectiveRequest(2, AgentProtocol.OP_GATHER, AgentProtocol.DTYPE_INT32, words, words,
                0, 0, part, 0));
            for (int h = 0; h < 2; h++)
            {
                for (int i = 0; i < words; i++)
                {
                    assertThat(data[h].getAtIndex(INT, i)).as("host %d word %d", h, i).isEqualTo(-i);
                }
            }
            data[0].setAtIndex(INT, 0, 5);
            data[1].setAtIndex(INT, 0, -5);
            run(a, b, data, new CollectiveRequest(3, AgentProtocol.OP_MIN, AgentProtocol.DTYPE_INT32, 1, 1));
            assertThat(data[0].getAtIndex(INT, 0)).isEqualTo(-5);
            assertThat(data[1].getAtIndex(INT, 0)).isEqualTo(-5);
        }
    }

    /**
     * A float sum staged in chunks, several in flight (as {@link RoundPipeline} cuts them: whole packets, or whole parts
     * and packet pieces of a part), gives the same bits as the round staged whole: the blocks, and so the fixed-point
     * exponents, are the same.
     */
    @Test
    @Timeout(60)
    void shouldGiveTheSameBitsInChunksAsWhole() throws Exception
    {
        final int n = 4 * 1000 + 37;
        try (SwitchOnThread sw = SwitchOnThread.start();
             Arena arena = Arena.ofShared();
             NetworkStage a = stage(sw.address(), 0);
             NetworkStage b = stage(sw.address(), 1))
        {
            final java.util.Random random = new java.util.Random(11);
            final MemorySegment[] inputs = {arena.allocate(4L * n), arena.allocate(4L * n)};
            for (final MemorySegment input : inputs)
            {
                for (int i = 0; i < n; i++)
                {
                    input.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i,
                        (float)random.nextGaussian() * (1 << random.nextInt(24)) / (1 << 12));
                }
            }
            final CollectiveRequest[] rounds = {
                new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, n, n),
                new CollectiveRequest(2, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 4000, 4000, 0, 0, 1000,
                    0),
                new CollectiveRequest(3, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 400, 400, 0, 0, 100,
                    0)};
            // Pieces of packets, pieces of a part, whole parts.
            final long[] chunkElements = {300, 300, 100};
            for (int k = 0; k < rounds.length; k++)
            {
                final CollectiveRequest round = rounds[k];
                final MemorySegment[] whole = copies(arena, inputs);
                run(a, b, whole, round);
                final MemorySegment[] chunked = copies(arena, inputs);
                final List<CompletableFuture<Void>> staged = new java.util.ArrayList<>();
                int chunks = 0;
                for (long at = 0; at < round.count(); chunks++)
                {
                    final long end = RoundPipeline.chunkEnd(round, at, a.lanes(), chunkElements[k]);
                    final CollectiveRequest chunk = RoundPipeline.chunk(round, at, end);
                    staged.add(a.stage(chunked[0], at, chunk, 2));
                    staged.add(b.stage(chunked[1], at, chunk, 2));
                    at = end;
                }
                for (final CompletableFuture<Void> f : staged)
                {
                    f.get(30, TimeUnit.SECONDS);
                }
                assertThat(chunks).as("round %d", round.sequence()).isGreaterThanOrEqualTo(4);
                for (int h = 0; h < 2; h++)
                {
                    assertThat(chunked[h].asSlice(0, 4 * round.count()).mismatch(whole[h].asSlice(0,
                        4 * round.count()))).as("round %d host %d", round.sequence(), h).isEqualTo(-1);
                }
            }
        }
    }

    /**
     * On jumbo-frame links the switch job's packets fill the MTU (2,048 lanes at 9000 bytes): an agent refuses such a
     * job at its JOIN, naming both sizes, unless its --max-lanes allows them; then the round goes through.
     */
    @Test
    @Timeout(60)
    void shouldJoinAJumboFrameJobOnlyWithMaxLanesThatCarryIt() throws Exception
    {
        // The refused JOIN still registers its worker at the switch (a later JOIN of that worker from another socket
        // is a restart, a new session): a switch of its own.
        try (SwitchOnThread other = SwitchOnThread.start(2048);
             NetworkStage refused = stage(other.address(), 0, new HostAgentContext()))
        {
            assertThat(refused.joined()).failsWithin(30, TimeUnit.SECONDS)
                .withThrowableThat().withMessageContaining("2048 lanes").withMessageContaining("--max-lanes 2048");
        }
        try (SwitchOnThread sw = SwitchOnThread.start(2048);
             Arena arena = Arena.ofShared())
        {
            final int n = 5000;
            try (NetworkStage a = stage(sw.address(), 0, new HostAgentContext().maxLanes(2048));
                 NetworkStage b = stage(sw.address(), 1, new HostAgentContext().maxLanes(2048)))
            {
                final MemorySegment[] data = {arena.allocate(4L * n), arena.allocate(4L * n)};
                for (int i = 0; i < n; i++)
                {
                    data[0].setAtIndex(INT, i, i);
                    data[1].setAtIndex(INT, i, 7);
                }
                run(a, b, data, new CollectiveRequest(1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_INT32, n, n));
                assertThat(a.lanes()).isEqualTo(2048);
                for (int i = 0; i < n; i++)
                {
                    assertThat(data[0].getAtIndex(INT, i)).isEqualTo(i + 7);
                    assertThat(data[1].getAtIndex(INT, i)).isEqualTo(i + 7);
                }
            }
        }
    }

    @Test
    void shouldRefuseMaxLanesOutsideADatagram()
    {
        assertThatThrownBy(() -> new HostAgentContext().maxLanes(0)).hasMessageContaining("max lanes 0");
        assertThatThrownBy(() -> new HostAgentContext().maxLanes(20_000)).hasMessageContaining("max lanes 20000");
    }

    private static MemorySegment[] copies(final Arena arena, final MemorySegment[] inputs)
    {
        final MemorySegment[] copies = new MemorySegment[inputs.length];
        for (int i = 0; i < inputs.length; i++)
        {
            copies[i] = arena.allocate(inputs[i].byteSize()).copyFrom(inputs[i]);
        }
        return copies;
    }

    /** A software switch with job 7 of 2 workers, on a thread of its own. */
    private record SwitchOnThread(UdpTransport udp, AgentRunner runner) implements AutoCloseable
    {
        static SwitchOnThread start()
        {
            return start(64);
        }

        /** Job 7 of 2 workers, 16 slots of {@code lanes} lanes. */
        static SwitchOnThread start(final int lanes)
        {
            final UdpTransport udp = UdpTransport.open(new InetSocketAddress("127.0.0.1", 0), List.of(), 16, 16,
                InaggHeader.messageLength(Math.max(256, lanes)), 64);
            final SoftwareSwitch sw = new SoftwareSwitch(udp, new CounterRegistry(64), 64);
            sw.addJob(new SwitchJobConfig(7, 2, 16, lanes));
            final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(0), Throwable::printStackTrace,
                null, sw);
            AgentRunner.startOnThread(runner);
            return new SwitchOnThread(udp, runner);
        }

        InetSocketAddress address()
        {
            return udp.localAddress();
        }

        @Override
        public void close()
        {
            runner.close();
        }
    }

    private static NetworkStage stage(final InetSocketAddress switchAddress, final int host)
    {
        return stage(switchAddress, host, new HostAgentContext());
    }

    private static NetworkStage stage(final InetSocketAddress switchAddress, final int host,
        final HostAgentContext context)
    {
        return new NetworkStage(context.switchAddress(switchAddress)
            .bindAddress(new InetSocketAddress("127.0.0.1", 0)),
            new Hello(AgentProtocol.VERSION, 2 * host, 4, 0, 2, host, 2, 7, 1, "k", 0));
    }

    private static void run(final NetworkStage a, final NetworkStage b, final MemorySegment[] data,
        final CollectiveRequest round) throws Exception
    {
        final CompletableFuture<Void> first = a.stage(data[0], round, 2);
        b.stage(data[1], round, 2).get(30, TimeUnit.SECONDS);
        first.get(30, TimeUnit.SECONDS);
    }

    @Test
    void shouldNameTheControllerJobAfterTheRunIdAndAHashInTheCharactersTheControllerAccepts()
    {
        assertThat(NetworkStage.jobName("run-42:a@b.c_d-0123456789abcdef")).matches("run-42:a@b\\.c_d-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("my run/é-0123456789abcdef")).matches("my_run__-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("key")).matches("job-[0-9a-f]{16}");
        final String longKey = "r".repeat(190) + "-0123456789abcdef";
        assertThat(NetworkStage.jobName(longKey)).hasSize(128).matches("r+-[0-9a-f]{16}");
        assertThat(NetworkStage.jobName("run-0123456789abcdef")).isNotEqualTo(NetworkStage.jobName("run-0123456789abcdee"));
    }

    @Test
    void shouldDeriveTheSameSecretOnEveryHostThatTheNameDoesNotReveal()
    {
        final String key = "run-42-0123456789abcdef";
        assertThat(NetworkStage.jobSecret(key)).isEqualTo(NetworkStage.jobSecret(key)).matches("[0-9a-f]{64}")
            .doesNotContain("0123456789abcdef").isNotEqualTo(NetworkStage.jobSecret("run-42-0123456789abcdee"));
        assertThat(NetworkStage.jobName(key)).doesNotContain("0123456789abcdef")
            .doesNotContain(NetworkStage.jobSecret(key).substring(0, 16));
    }
}
