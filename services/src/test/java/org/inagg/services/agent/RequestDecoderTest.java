package org.inagg.services.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RequestDecoderTest
{
    @Test
    void shouldDecodeAHelloAsTheRankWroteIt()
    {
        final Hello hello = RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 1, 2, 1, 2, "run-1"));
        assertThat(hello).isEqualTo(new Hello(AgentProtocol.VERSION, 1, 2, 1, 2, 0, 1, 0, 4242, "run-1", 0));
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 3, 4, 1, 2, "k")))
            .hasMessageContaining("one host but local world size 2 != world size 4");
        assertThat(RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 0, 1, 0, 1, "k")
            .putInt(AgentProtocol.HELLO_TIMEOUT_OFFSET, 2500)).collectiveTimeoutMs()).isEqualTo(2500);
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 0, 1, 0, 1, "k")
            .putInt(AgentProtocol.HELLO_TIMEOUT_OFFSET, -1))).hasMessageContaining("collective timeout -1 ms");
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 0, 1, 0, 1, "k")
            .putInt(40, AgentProtocol.MAX_KEY_BYTES + 1))).hasMessageContaining("job key length 209 is not in 1..208");
    }

    @Test
    void shouldNameWhatIsWrongInAHello()
    {
        assertThatThrownBy(() -> RequestDecoder.decodeHello(ByteBuffer.allocate(10)))
            .hasMessageContaining("hello frame of 10 bytes");
        final ByteBuffer badMagic = TestRank.hello(AgentProtocol.VERSION, 0, 1, 0, 1, "k");
        badMagic.putInt(0, 7);
        assertThatThrownBy(() -> RequestDecoder.decodeHello(badMagic)).hasMessageContaining("not an inagg rank");
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(9, 0, 1, 0, 1, "k")))
            .isInstanceOfSatisfying(AgentProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(AgentProtocol.ERROR_VERSION))
            .hasMessageContaining("version 9");
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 4, 4, 0, 1, "k")))
            .hasMessageContaining("rank 4 is not in 0..3");
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 0, 2, 2, 2, "k")))
            .hasMessageContaining("local rank 2 is not in 0..1");
        assertThatThrownBy(() -> RequestDecoder.decodeHello(TestRank.hello(AgentProtocol.VERSION, 0, 2, 0, 2, "")))
            .hasMessageContaining("job key length 0");
        final ByteBuffer notUtf8 = TestRank.hello(AgentProtocol.VERSION, 0, 2, 0, 2, "ab");
        notUtf8.put(AgentProtocol.HELLO_KEY_OFFSET, (byte)0xC3).put(AgentProtocol.HELLO_KEY_OFFSET + 1, (byte)0x28);
        assertThatThrownBy(() -> RequestDecoder.decodeHello(notUtf8)).hasMessageContaining("not UTF-8");
    }

    @Test
    void shouldCheckEveryFieldOfARequest()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment d = arena.allocate(SharedRegion.DESCRIPTOR_LENGTH);
            write(d, 5, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_INT32, 1024, 5000);
            assertThat(RequestDecoder.decodeRequest(d, 5, 4096))
                .isEqualTo(new CollectiveRequest(5, AgentProtocol.OP_AVG, AgentProtocol.DTYPE_INT32, 1024, 5000));
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 6, 4096)).hasMessageContaining("sequence 5, "
                + "expected 6");
            write(d, 1, 6, AgentProtocol.DTYPE_INT32, 1, 1);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096)).hasMessageContaining("op 6");
            write(d, 1, AgentProtocol.OP_SUM, 0, 1, 1);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096)).hasMessageContaining("dtype 0");
            write(d, 1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 1025, 2000);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096))
                .hasMessageContaining("element count 1025 is not in 0..1024");
            write(d, 1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 10, 9);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096))
                .hasMessageContaining("total 9 is less than this round's count 10");
        }
    }

    @Test
    void shouldCheckTheGatherRangeOfARequest()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment d = arena.allocate(SharedRegion.DESCRIPTOR_LENGTH);
            write(d, 1, AgentProtocol.OP_GATHER, AgentProtocol.DTYPE_INT32, 10, 30);
            gather(d, 8, 32);
            assertThat(RequestDecoder.decodeRequest(d, 1, 4096)).isEqualTo(
                new CollectiveRequest(1, AgentProtocol.OP_GATHER, AgentProtocol.DTYPE_INT32, 10, 30, 8, 32));
            gather(d, 8, 33);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096))
                .hasMessageContaining("gather range 8+33 is not within the round's 40 bytes");
            gather(d, -1, 0);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096)).hasMessageContaining("gather range -1");
            gather(d, 0, Long.MAX_VALUE);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096)).hasMessageContaining("gather range 0+");
            gather(d, 0, 4);
            write(d, 1, AgentProtocol.OP_GATHER, AgentProtocol.DTYPE_FLOAT32, 10, 30);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096))
                .hasMessageContaining("GATHER of dtype 1");
            write(d, 1, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32, 10, 30);
            assertThatThrownBy(() -> RequestDecoder.decodeRequest(d, 1, 4096))
                .hasMessageContaining("gather range 0+4 in a sum");
        }
    }

    @Test
    void shouldAcceptAReadyCountThatGrowsUpToTheRoundAndOnlyAWholeOneForRoundsThatAreNotSums()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment d = arena.allocate(SharedRegion.DESCRIPTOR_LENGTH);
            final CollectiveRequest sum = new CollectiveRequest(4, AgentProtocol.OP_SUM, AgentProtocol.DTYPE_FLOAT32,
                3000, 3000);
            d.set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, 1024);
            assertThat(RequestDecoder.decodeReady(d, sum, 0)).isEqualTo(1024);
            assertThat(RequestDecoder.decodeReady(d, sum, 1024)).isEqualTo(1024);
            assertThatThrownBy(() -> RequestDecoder.decodeReady(d, sum, 2048))
                .hasMessageContaining("ready count 1024 of round #4 is not in 2048..3000");
            d.set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, 3001);
            assertThatThrownBy(() -> RequestDecoder.decodeReady(d, sum, 0)).hasMessageContaining("not in 0..3000");
            d.set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, 10);
            final CollectiveRequest max = new CollectiveRequest(5, AgentProtocol.OP_MAX, AgentProtocol.DTYPE_INT32, 20,
                20);
            assertThatThrownBy(() -> RequestDecoder.decodeReady(d, max, 0))
                .hasMessageContaining("only SUM and AVG rounds are copied in chunks");
            d.set(SharedRegion.LONG, SharedRegion.READY_ELEMENTS, 20);
            assertThat(RequestDecoder.decodeReady(d, max, 0)).isEqualTo(20);
        }
    }

    static void gather(final MemorySegment d, final long from, final long length)
    {
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_FROM, from);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_LENGTH, length);
    }

    static void write(final MemorySegment d, final long sequence, final int op, final int dtype, final long count,
        final long total)
    {
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_SEQUENCE, sequence);
        d.set(SharedRegion.INT, SharedRegion.REQUEST_OP, op);
        d.set(SharedRegion.INT, SharedRegion.REQUEST_DTYPE, dtype);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_COUNT, count);
        d.set(SharedRegion.LONG, SharedRegion.REQUEST_TOTAL, total);
    }
}
