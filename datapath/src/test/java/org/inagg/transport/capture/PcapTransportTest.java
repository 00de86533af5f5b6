package org.inagg.transport.capture;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.inagg.transport.InProcessNetwork;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.frame.UdpFrameCodec;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The capture decorator writes pcap files that parse back, with frames byte-exact (headers built independently here),
 * both directions, the size cap respected, and no allocation per message.
 */
@Timeout(60)
class PcapTransportTest
{
    @TempDir
    Path dir;

    private static byte[] message(final int type, final int worker, final int sequence, final int... lanes)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(lanes.length)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, type, 0, 7, worker, 3, 1, sequence, lanes.length, -5, InaggHeader.NO_EXPONENT, 2);
        for (int i = 0; i < lanes.length; i++)
        {
            InaggHeader.setElement(m, 0, i, lanes[i]);
        }
        return bytes;
    }

    private static boolean send(final Transport transport, final int peer, final byte[] bytes)
    {
        final long offset = transport.claim(peer, bytes.length);
        if (offset == Transport.CLAIM_FAILED)
        {
            return false;
        }
        MemorySegment.copy(bytes, 0, transport.txMemory(), ValueLayout.JAVA_BYTE, offset, bytes.length);
        transport.commit();
        transport.flush();
        return true;
    }

    private static List<byte[]> drain(final Transport transport, final int expected)
    {
        final List<byte[]> received = new ArrayList<>();
        final MessageHandler collect = (memory, offset, length, peer) ->
            received.add(memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (received.size() < expected && System.nanoTime() < deadline)
        {
            transport.poll(collect, 16);
        }
        return received;
    }

    /** The 42 header bytes, written out field by field as RFC 791/768 lay them out, checksum by RFC 1071. */
    private static byte[] expectedHeaders(
        final byte[] srcIp, final int srcPort, final byte[] dstIp, final int dstPort, final int messageLength)
    {
        final ByteBuffer b = ByteBuffer.allocate(42);
        b.put(new byte[] {2, 0}).put(dstIp).put(new byte[] {2, 0}).put(srcIp).putShort((short)0x0800);
        b.put((byte)0x45).put((byte)0).putShort((short)(28 + messageLength)).putShort((short)0)
            .putShort((short)0x4000).put((byte)64).put((byte)17).putShort((short)0).put(srcIp).put(dstIp);
        long sum = 0;
        for (int i = 14; i < 34; i += 2)
        {
            sum += ((b.get(i) & 0xFF) << 8) | (b.get(i + 1) & 0xFF);
        }
        while ((sum >> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        b.putShort(24, (short)~sum);
        b.putShort((short)srcPort).putShort((short)dstPort).putShort((short)(8 + messageLength)).putShort((short)0);
        return b.array();
    }

    private static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static boolean ipv4ChecksumValid(final byte[] frame)
    {
        long sum = 0;
        for (int i = 14; i < 34; i += 2)
        {
            sum += ((frame[i] & 0xFF) << 8) | (frame[i + 1] & 0xFF);
        }
        while ((sum >> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        return sum == 0xFFFF;
    }

    @Test
    void shouldCaptureBothDirectionsOfAnInProcessEndpointWithSynthesizedAddresses() throws IOException
    {
        final Path file = dir.resolve("inproc.pcap");
        final InProcessNetwork network = new InProcessNetwork(3, 1 << 16, 1024);
        final Transport captured = new PcapTransport(network.endpoint(0), PcapWriter.open(file, 1 << 20),
            FrameHeaders.inProcess(0));
        final Transport worker = network.endpoint(2);
        final byte[] join = message(MessageType.JOIN, 1, 2);
        final byte[] sum = message(MessageType.AGGREGATE, 1, 99, 1, -2, Integer.MAX_VALUE, Integer.MIN_VALUE);
        assertThat(send(worker, 0, join)).isTrue();
        assertThat(drain(captured, 1)).containsExactly(join);
        assertThat(send(captured, 2, sum)).isTrue();
        final long aborted = captured.claim(2, 20);
        assertThat(aborted).isNotEqualTo(Transport.CLAIM_FAILED);
        captured.abort();
        assertThat(drain(worker, 1)).containsExactly(sum);
        captured.close();

        final PcapReader.Capture capture = PcapReader.read(file);
        assertThat(capture.linkType()).isEqualTo(PcapWriter.LINKTYPE_ETHERNET);
        assertThat(capture.records()).hasSize(2);
        final byte[] self = {10, 0, 0, 1};
        final byte[] endpoint2 = {10, 0, 0, 3};
        assertThat(capture.records().get(0).frame())
            .isEqualTo(concat(expectedHeaders(endpoint2, 47000, self, 47000, join.length), join));
        assertThat(capture.records().get(1).frame())
            .isEqualTo(concat(expectedHeaders(self, 47000, endpoint2, 47000, sum.length), sum));
        for (final PcapReader.Record record : capture.records())
        {
            assertThat(record.originalLength()).isEqualTo(record.frame().length);
            assertThat(ipv4ChecksumValid(record.frame())).isTrue();
            assertThat(record.timestampNanos()).isCloseTo(System.currentTimeMillis() * 1_000_000L,
                org.assertj.core.data.Offset.offset(60_000_000_000L));
        }
        assertThat(Files.size(file)).isEqualTo(24 + 2 * 16 + 42L * 2 + join.length + sum.length);
    }

    @Test
    void shouldCaptureUdpWithTheSocketsRealAddressesAndPorts() throws IOException
    {
        final Path file = dir.resolve("udp.pcap");
        final InetAddress loopback = InetAddress.getLoopbackAddress();
        try (UdpTransport server = UdpTransport.open(new InetSocketAddress("0.0.0.0", 0), List.of(), 8, 1024, 4);
             UdpTransport client = UdpTransport.open(new InetSocketAddress(loopback, 0),
                 List.of(new InetSocketAddress(loopback, server.localAddress().getPort())), 1, 1024, 4))
        {
            final Transport captured = new PcapTransport(server, PcapWriter.open(file, 1 << 20),
                FrameHeaders.udp(server));
            final byte[] up = message(MessageType.AGGREGATE, 3, 1, 10, 20);
            final byte[] down = message(MessageType.AGGREGATE, 3, 1, 30, 60);
            assertThat(send(client, 0, up)).isTrue();
            assertThat(drain(captured, 1)).containsExactly(up);
            assertThat(send(captured, 0, down)).isTrue();
            assertThat(drain(client, 1)).containsExactly(down);
            final int serverPort = server.localAddress().getPort();
            final int clientPort = client.localAddress().getPort();
            captured.close();

            final List<PcapReader.Record> records = PcapReader.read(file).records();
            assertThat(records).hasSize(2);
            final byte[] lo = loopback.getAddress();
            assertThat(records.get(0).frame())
                .isEqualTo(concat(expectedHeaders(lo, clientPort, lo, serverPort, up.length), up));
            assertThat(records.get(1).frame())
                .isEqualTo(concat(expectedHeaders(lo, serverPort, lo, clientPort, down.length), down));
        }
    }

    @Test
    void shouldShowTheRealAddressOfASenderBeyondThePeerTable() throws IOException
    {
        final Path file = dir.resolve("stranger.pcap");
        final InetAddress loopback = InetAddress.getLoopbackAddress();
        try (UdpTransport known = UdpTransport.open(new InetSocketAddress(loopback, 0), List.of(), 1, 1024, 4);
             UdpTransport node = UdpTransport.open(new InetSocketAddress(loopback, 0),
                 List.of(known.localAddress()), 1, 1024, 4);
             UdpTransport stranger = UdpTransport.open(new InetSocketAddress(loopback, 0),
                 List.of(node.localAddress()), 1, 1024, 4))
        {
            final Transport captured = new PcapTransport(node, PcapWriter.open(file, 1 << 20), FrameHeaders.udp(node));
            final byte[] msg = message(MessageType.AGGREGATE, 4, 8, 1);
            final int nodePort = node.localAddress().getPort();
            final int strangerPort = stranger.localAddress().getPort();
            assertThat(send(stranger, 0, msg)).isTrue();
            final List<Integer> peers = new ArrayList<>();
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (peers.isEmpty() && System.nanoTime() < deadline)
            {
                captured.poll((memory, offset, length, peer) -> peers.add(peer), 1);
            }
            assertThat(peers).as("the peer table holds only the known peer").containsExactly(-1);
            captured.close();
            final byte[] lo = loopback.getAddress();
            assertThat(PcapReader.read(file).records().get(0).frame())
                .isEqualTo(concat(expectedHeaders(lo, strangerPort, lo, nodePort, msg.length), msg));
        }
    }

    @Test
    void shouldStopAtTheSizeCapSayingSoOnceWhileTrafficGoesOn() throws IOException
    {
        final Path file = dir.resolve("capped.pcap");
        final byte[] msg = message(MessageType.AGGREGATE, 0, 0, new int[64]);
        final int record = 16 + 42 + msg.length;
        final long cap = 24 + 5L * record + record / 2;
        final List<String> notices = new ArrayList<>();
        final InProcessNetwork network = new InProcessNetwork(2, 1 << 16, 1024);
        final PcapWriter writer = PcapWriter.open(file, cap, notices::add);
        final Transport captured = new PcapTransport(network.endpoint(0), writer, FrameHeaders.inProcess(0));
        final Transport peer = network.endpoint(1);
        for (int i = 0; i < 20; i++)
        {
            assertThat(send(captured, 1, msg)).isTrue();
            assertThat(drain(peer, 1)).as("message %d still delivered", i).hasSize(1);
        }
        captured.close();
        assertThat(Files.size(file)).isEqualTo(24 + 5L * record).isLessThanOrEqualTo(cap);
        assertThat(PcapReader.read(file).records()).hasSize(5);
        assertThat(writer.framesCaptured()).isEqualTo(5);
        assertThat(writer.framesNotCaptured()).isEqualTo(15);
        assertThat(writer.stopped()).isTrue();
        assertThat(notices).hasSize(1);
        assertThat(notices.get(0)).contains("size cap of " + cap + " bytes").contains("after 5 frames");
    }

    /** A transport whose messages sit behind their frame's headers in the same memory, as DPDK's do in mbufs. */
    private static final class FramedTransport implements Transport
    {
        private final MemorySegment memory;
        private final int ihlWords;
        private final byte[] received;

        FramedTransport(final Arena arena, final int ihlWords, final byte[] receivedFrame)
        {
            this.memory = arena.allocate(4096);
            this.ihlWords = ihlWords;
            this.received = receivedFrame;
        }

        @Override
        public int maxMessageLength()
        {
            return 1024;
        }

        @Override
        public MemorySegment txMemory()
        {
            return memory;
        }

        @Override
        public long claim(final int peer, final int length)
        {
            UdpFrameCodec.write(memory, 100, 0x0200_0000_00AAL, 0x0A00_0009, 5000, 0x0200_0000_00BBL,
                0x0A00_0008, 6000, length);
            return 142;
        }

        @Override
        public void commit()
        {
        }

        @Override
        public void abort()
        {
        }

        @Override
        public int flush()
        {
            return 0;
        }

        @Override
        public int poll(final MessageHandler handler, final int limit)
        {
            MemorySegment.copy(received, 0, memory, ValueLayout.JAVA_BYTE, 1000, received.length);
            final int headers = 14 + 4 * ihlWords + 8;
            handler.onMessage(memory, 1000 + headers, received.length - headers, 0);
            return 1;
        }

        @Override
        public String describePeer(final int peer)
        {
            return "framed " + peer;
        }

        @Override
        public void close()
        {
        }
    }

    @Test
    void shouldWriteInPlaceFramesAsTheyAreIncludingIpv4Options() throws IOException
    {
        final Path file = dir.resolve("inplace.pcap");
        final byte[] msg = message(MessageType.AGGREGATE, 1, 5, 7, 8, 9);
        // A received frame with one word of IPv4 options (IHL 6): Ethernet 14, IPv4 24, UDP 8.
        final ByteBuffer rx = ByteBuffer.allocate(46 + msg.length);
        rx.put(new byte[] {2, 0, 10, 0, 0, 9, 2, 0, 10, 0, 0, 8}).putShort((short)0x0800)
            .put((byte)0x46).put((byte)0).putShort((short)(24 + 8 + msg.length)).putInt(0x4000)
            .put((byte)64).put((byte)17).putShort((short)0x1234).putInt(0x0A000008).putInt(0x0A000009)
            .putInt(0x01010101).putShort((short)6000).putShort((short)5000).putShort((short)(8 + msg.length))
            .putShort((short)0).put(msg);
        try (Arena arena = Arena.ofConfined())
        {
            final FramedTransport framed = new FramedTransport(arena, 6, rx.array());
            final Transport captured = new PcapTransport(framed, PcapWriter.open(file, 1 << 20),
                FrameHeaders.inPlace());
            assertThat(send(captured, 0, msg)).isTrue();
            final MemorySegment sentFrame = framed.memory.asSlice(100, 42 + msg.length);
            assertThat(drain(captured, 1)).containsExactly(msg);
            final List<PcapReader.Record> records = PcapReader.read(capturedFile(captured, file)).records();
            assertThat(records).hasSize(2);
            assertThat(records.get(0).frame()).isEqualTo(sentFrame.toArray(ValueLayout.JAVA_BYTE));
            assertThat(records.get(1).frame()).isEqualTo(rx.array());
        }
    }

    private static Path capturedFile(final Transport captured, final Path file)
    {
        captured.close();
        return file;
    }

    @Test
    void shouldNotAllocatePerMessage() throws IOException
    {
        final Path file = dir.resolve("alloc.pcap");
        final InProcessNetwork network = new InProcessNetwork(2, 1 << 20, 2048);
        final Transport captured = new PcapTransport(network.endpoint(0), PcapWriter.open(file, 1L << 40),
            FrameHeaders.inProcess(0));
        final Transport peer = network.endpoint(1);
        final MessageHandler ignore = (memory, offset, length, p) -> { };
        final int length = InaggHeader.messageLength(256);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        long allocated = 0;
        long received = 0;
        for (int round = 0; round < 3; round++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++)
            {
                final long offset = captured.claim(1, length);
                InaggHeader.write(captured.txMemory(), offset, MessageType.AGGREGATE, 0, 1, 0, i & 127, 0, i, 256, 0,
                    0, 0);
                captured.commit();
                peer.poll(ignore, 1); // an Agrona ring's padding record at the wrap may make this return 0
                final long back = peer.claim(0, length);
                InaggHeader.write(peer.txMemory(), back, MessageType.AGGREGATE, 1, 1, 0, i & 127, 0, i, 256, 0, 0,
                    0);
                peer.commit();
                received += captured.poll(ignore, 1);
            }
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        captured.close();
        // 40,000 frames of 1,086 bytes (43 MB through the file) in the last round: a few bytes per message would show.
        assertThat(allocated).as("bytes allocated for 40,000 captured messages").isLessThan(40_000);
        assertThat(received).isGreaterThan(59_000);
        assertThat(Files.size(file)).isEqualTo(24 + (60_000L + received) * (16 + 42 + length));
    }
}
