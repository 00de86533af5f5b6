package org.inagg.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sockets sharing one port (SO_REUSEPORT) with {@link ReusePortSteering#byJob} attached: every datagram of a job goes
 * to socket {@code jobId % sockets}, whichever source port it comes from, and each socket of the group gets its own
 * descriptor for batch I/O.
 */
class ReusePortSteeringTest
{
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    @Test
    @Timeout(30)
    void shouldSteerEachJobsDatagramsToTheSocketOfItsJobIdModuloTheGroup() throws Exception
    {
        final int sockets = 3;
        final List<UdpTransport> group = new ArrayList<>();
        final List<DatagramSocket> senders = new ArrayList<>();
        try
        {
            group.add(UdpTransport.openSharingPort(ANY_LOOPBACK, 64, 64, 1024, 8));
            final InetSocketAddress port = group.get(0).localAddress();
            assertThat(group.get(0).steer(ReusePortSteering.byJob(sockets))).isNull();
            for (int i = 1; i < sockets; i++)
            {
                group.add(UdpTransport.openSharingPort(port, 64, 64, 1024, 8));
            }
            for (final UdpTransport transport : group)
            {
                assertThat(transport.localAddress()).isEqualTo(port);
                assertThat(transport.describeIo()).as("each socket found its own descriptor").contains("sendmmsg");
            }
            // Jobs 0..11, each from 4 source ports (the kernel's own hash would spread one job's senders).
            for (int s = 0; s < 4; s++)
            {
                final DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress());
                senders.add(sender);
                for (int job = 0; job < 12; job++)
                {
                    final byte[] header = new byte[20];
                    header[0] = (byte)0x12;
                    header[2] = (byte)(job >>> 8);
                    header[3] = (byte)job;
                    sender.send(new DatagramPacket(header, header.length, port));
                }
            }
            // Too short to hold a job id: the program's load fails and the kernel gives it to socket 0.
            senders.get(0).send(new DatagramPacket(new byte[1], 1, port));
            final List<List<Integer>> jobs = new ArrayList<>();
            for (int i = 0; i < sockets; i++)
            {
                jobs.add(new ArrayList<>());
            }
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (jobs.stream().mapToInt(List::size).sum() < 4 * 12 + 1 && System.nanoTime() - deadline < 0)
            {
                for (int i = 0; i < sockets; i++)
                {
                    final List<Integer> got = jobs.get(i);
                    group.get(i).poll((buffer, offset, length, peer) -> got.add(length < 4 ? -1
                        : Short.toUnsignedInt(Short.reverseBytes(buffer.get(ValueLayout.JAVA_SHORT_UNALIGNED,
                        offset + 2)))), 64);
                }
            }
            assertThat(jobs.stream().mapToInt(List::size).sum()).isEqualTo(4 * 12 + 1);
            for (int i = 0; i < sockets; i++)
            {
                final int socket = i;
                assertThat(jobs.get(i)).as("socket %d", i).hasSize(i == 0 ? 17 : 16)
                    .allMatch(job -> job < 0 ? socket == 0 : ReusePortSteering.shardOf(job, sockets) == socket);
            }
        }
        finally
        {
            senders.forEach(DatagramSocket::close);
            group.forEach(UdpTransport::close);
        }
    }

    @Test
    void shouldPlaceJobsAsTheProgramDoesAndRefuseGroupsItCannotSteer()
    {
        assertThat(ReusePortSteering.shardOf(0, 2)).isZero();
        assertThat(ReusePortSteering.shardOf(7, 2)).isEqualTo(1);
        assertThat(ReusePortSteering.shardOf(65_535, 4)).isEqualTo(3);
        assertThat(ReusePortSteering.byJob(4)).hasToString("job id % 4");
        assertThatThrownBy(() -> ReusePortSteering.byJob(0)).hasMessageContaining("1..64");
        assertThatThrownBy(() -> ReusePortSteering.byJob(65)).hasMessageContaining("1..64");
        assertThatThrownBy(() -> ReusePortSteering.shardOf(65_536, 2)).hasMessageContaining("0..65535");
        assertThatThrownBy(() -> ReusePortSteering.shardOf(1, 0)).hasMessageContaining("1..64");
    }
}
