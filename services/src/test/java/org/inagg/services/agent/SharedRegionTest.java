package org.inagg.services.agent;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SharedRegionTest
{
    @TempDir
    Path dir;

    @Test
    void shouldWriteTheHeaderAndPlaceEachRegionAsDrawn()
    {
        final Path file = dir.resolve("job");
        try (SharedRegion region = SharedRegion.create(file, 3, 6, 8192, "key-1"))
        {
            final var m = region.mapping();
            assertThat(m.get(SharedRegion.LONG, 0)).isEqualTo(SharedRegion.MAGIC);
            assertThat(m.get(SharedRegion.INT, 8)).isEqualTo(AgentProtocol.VERSION);
            assertThat(m.get(SharedRegion.INT, 12)).isEqualTo(3);
            assertThat(m.get(SharedRegion.INT, 16)).isEqualTo(6);
            assertThat(m.get(SharedRegion.INT, 20)).isZero(); // network chunk bytes: whole rounds
            assertThat(m.get(SharedRegion.LONG, 24)).isEqualTo(8192);
            assertThat(m.get(SharedRegion.LONG, 32)).isEqualTo(8192); // 4096 + 3 x 512, aligned up to 4096
            assertThat(m.get(SharedRegion.LONG, 40)).isEqualTo(8192 + 3 * 8192);
            assertThat(m.get(SharedRegion.INT, 56)).isEqualTo(5);
            assertThat(m.byteSize()).isEqualTo(SharedRegion.fileSize(3, 8192)).isEqualTo(8192 + 4 * 8192);
            assertThat(region.data(2).address()).isEqualTo(m.address() + 8192 + 2 * 8192);
            assertThat(region.descriptor(1).address()).isEqualTo(m.address() + 4096 + 512);
            region.complete(1, 9, AgentProtocol.ERROR_NON_FINITE, "NaN ".repeat(200));
            assertThat(region.descriptor(1).get(SharedRegion.LONG, SharedRegion.COMPLETED_SEQUENCE)).isEqualTo(9);
            assertThat(region.descriptor(1).get(SharedRegion.INT, SharedRegion.MESSAGE_LENGTH))
                .isEqualTo(SharedRegion.MAX_MESSAGE_BYTES);
            assertThat(Files.exists(file)).isTrue();
        }
        assertThat(Files.exists(file)).isFalse();
    }

    @Test
    void shouldWriteTheChunksTheRanksCopyInAndTheNetworkChunksTheyCompareAcrossHosts()
    {
        try (SharedRegion region = SharedRegion.create(dir.resolve("chunked"), 2, 4, 8192, "key-2", 1024, 65536))
        {
            assertThat(region.mapping().get(SharedRegion.INT, 60)).isEqualTo(1024);
            assertThat(region.mapping().get(SharedRegion.INT, 20)).isEqualTo(65536);
        }
    }

    @Test
    void shouldRefuseAFileLargerThanTheFreeSpaceNamingBoth()
    {
        assertThatThrownBy(() -> SharedRegion.create(dir.resolve("huge"), 256, 256, 1L << 34, "k"))
            .isInstanceOfSatisfying(AgentProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(AgentProtocol.ERROR_SHM_FULL))
            .hasMessageContaining("shared memory full").hasMessageContaining("bytes free");
        assertThat(Files.exists(dir.resolve("huge"))).isFalse();
    }
}
