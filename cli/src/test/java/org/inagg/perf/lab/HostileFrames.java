package org.inagg.perf.lab;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.wire.InaggHeader;

/**
 * Ethernet frames for the lab's switch (02:00:00:00:00:fe, 10.0.0.254:47000) built field by field, well-formed or
 * broken on purpose, and sent raw from a host's {@code eth0} (an AF_PACKET socket, so nothing in the host's stack
 * checks or fixes them).
 */
final class HostileFrames
{
    private static final int AGGREGATE = 1;

    private final List<String> frames = new ArrayList<>();

    /** An inagg AGGREGATE from {@code host}'s address and {@code udpPort}: {@code lanes} lanes, Element Count as given. */
    HostileFrames aggregate(
        final HostNetwork.Host host, final int udpPort, final int version, final int job, final int worker,
        final int slot, final int elementCount, final int lanes, final int times)
    {
        final ByteBuffer message = ByteBuffer.allocate(InaggHeader.LENGTH + 4 * lanes);
        message.put((byte)(version << 4 | AGGREGATE)).put((byte)0).putShort((short)job).putShort((short)worker)
            .putShort((short)slot).putInt(7).putShort((short)elementCount).put((byte)0).put(InaggHeader.NO_EXPONENT)
            .put((byte)0).put((byte)0).putShort((short)0);
        for (int i = 0; i < lanes; i++)
        {
            message.putInt(0x0101_0101 * (i + 1));
        }
        return frame(host, udpPort, message.array(), 0, times);
    }

    /** A frame whose IPv4 and UDP lengths claim {@code claimedExtra} more bytes than it carries (truncated). */
    HostileFrames truncated(final HostNetwork.Host host, final int udpPort, final int claimedExtra, final int times)
    {
        final byte[] header = new byte[InaggHeader.LENGTH];
        header[0] = (byte)(InaggHeader.VERSION << 4 | AGGREGATE);
        return frame(host, udpPort, header, claimedExtra, times);
    }

    /** Bytes that are no protocol at all (a broken Ethernet type field included). */
    HostileFrames junk(final int length, final int times)
    {
        final byte[] junk = new byte[length];
        for (int i = 0; i < length; i++)
        {
            junk[i] = (byte)(i * 37 + 11);
        }
        for (int t = 0; t < times; t++)
        {
            frames.add(HexFormat.of().formatHex(junk));
        }
        return this;
    }

    private HostileFrames frame(
        final HostNetwork.Host host, final int udpPort, final byte[] payload, final int claimedExtra, final int times)
    {
        final int udpLength = 8 + payload.length + claimedExtra;
        final ByteBuffer f = ByteBuffer.allocate(14 + 20 + 8 + payload.length);
        f.put(macBytes(HostNetwork.SWITCH_MAC)).put(macBytes(host.mac())).putShort((short)0x0800);
        f.put((byte)0x45).put((byte)0).putShort((short)(20 + udpLength)).putShort((short)0x1234).putShort((short)0)
            .put((byte)64).put((byte)17).putShort((short)0).putInt(WorkerEndpoint.parseIpv4(host.ipv4()))
            .putInt(WorkerEndpoint.parseIpv4(HostNetwork.SWITCH_IPV4));
        f.putShort((short)udpPort).putShort((short)InaggP4.UDP_PORT).putShort((short)udpLength).putShort((short)0);
        f.put(payload);
        final byte[] bytes = f.array();
        int sum = 0;
        for (int i = 14; i < 34; i += 2)
        {
            sum += (bytes[i] & 0xFF) << 8 | bytes[i + 1] & 0xFF;
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        bytes[24] = (byte)(~sum >>> 8);
        bytes[25] = (byte)~sum;
        for (int t = 0; t < times; t++)
        {
            frames.add(HexFormat.of().formatHex(bytes));
        }
        return this;
    }

    private static byte[] macBytes(final String mac)
    {
        return HexFormat.ofDelimiter(":").parseHex(mac);
    }

    /** Sends every frame from {@code host}'s eth0, raw; throws naming the failure. */
    void sendFrom(final HostNetwork.Host host) throws Exception
    {
        final List<String> command = new ArrayList<>(host.exec());
        command.addAll(List.of("python3", "-c", "import socket, sys\n"
            + "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
            + "s.bind(('eth0', 0))\n"
            + "for line in sys.stdin.read().split():\n"
            + "    s.send(bytes.fromhex(line))\n"));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (var in = process.getOutputStream())
        {
            in.write(String.join("\n", frames).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
        final String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0)
        {
            throw new IllegalStateException("raw send from " + host.namespace() + " failed: " + output);
        }
    }
}
