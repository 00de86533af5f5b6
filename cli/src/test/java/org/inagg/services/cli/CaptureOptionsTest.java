package org.inagg.services.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.inagg.transport.Transport;
import org.inagg.transport.UdpTransport;
import org.inagg.transport.capture.FrameHeaders;
import org.inagg.transport.capture.PcapWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --pcap} on a sharded switch: one file a shard, each holding what its shard's socket sent. */
class CaptureOptionsTest
{
    private static final InetSocketAddress LOOPBACK_ANY = new InetSocketAddress("127.0.0.1", 0);

    @TempDir
    Path dir;

    @Test
    void shouldNameEachShardsFileBeforeItsExtension()
    {
        assertThat(CaptureOptions.shardFile(Path.of("/tmp/s.pcap"), 0)).isEqualTo(Path.of("/tmp/s.shard0.pcap"));
        assertThat(CaptureOptions.shardFile(Path.of("cap.v2.pcap"), 3)).isEqualTo(Path.of("cap.v2.shard3.pcap"));
        assertThat(CaptureOptions.shardFile(Path.of("capture"), 1)).isEqualTo(Path.of("capture.shard1"));
        assertThat(CaptureOptions.shardFile(Path.of(".pcap"), 1)).as("a dot file has no extension")
            .isEqualTo(Path.of(".pcap.shard1"));
    }

    @Test
    void shouldCaptureEachShardIntoItsOwnFile() throws Exception
    {
        final CaptureOptions capture = new CaptureOptions();
        capture.file = dir.resolve("s.pcap");
        capture.maxBytes = "1M";
        try (UdpTransport sink = UdpTransport.open(LOOPBACK_ANY, List.of(), 4, 256, 16))
        {
            final int[] sent = {1, 3};
            for (int shard = 0; shard < 2; shard++)
            {
                final UdpTransport socket = UdpTransport.open(LOOPBACK_ANY, List.of(sink.localAddress()), 4, 256, 16);
                try (Transport captured = capture.wrap(shard, 2, socket, FrameHeaders.udp(socket)))
                {
                    for (int m = 0; m < sent[shard]; m++)
                    {
                        final long at = captured.claim(0, 64);
                        assertThat(at).isNotEqualTo(Transport.CLAIM_FAILED);
                        captured.commit();
                    }
                    captured.flush();
                }
            }
        }
        assertThat(dir.resolve("s.pcap")).as("no single file besides the shards'").doesNotExist();
        final StringWriter report = new StringWriter();
        capture.report(new PrintWriter(report));
        assertThat(report.toString()).contains("pcap: 1 frames").contains("s.shard0.pcap")
            .contains("pcap: 3 frames").contains("s.shard1.pcap");
        for (int shard = 0; shard < 2; shard++)
        {
            final Path file = dir.resolve("s.shard" + shard + ".pcap");
            // Each frame: a 16-byte record header, Ethernet/IPv4/UDP headers (42 bytes) and the 64-byte message.
            assertThat(Files.size(file)).as("%s", file)
                .isEqualTo(PcapWriter.GLOBAL_HEADER_LENGTH + (shard == 0 ? 1 : 3) * (16L + 42 + 64));
        }
    }
}
