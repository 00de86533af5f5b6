package org.inagg.services.agent;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The agent's chunks by default: only where a job's local ranks leave the host a core to sum on. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostAgentChunkDefaultTest
{
    @TempDir
    Path dir;

    @Test
    void shouldChunkByDefaultOnlyWhereTheHostHasMoreCoresThanLocalRanks()
    {
        final long auto = HostAgentContext.CHUNK_BYTES_AUTO;
        assertThat(HostAgentContext.chunkBytesFor(auto, 2, 4)).isZero();
        assertThat(HostAgentContext.chunkBytesFor(auto, 4, 4)).isZero();
        assertThat(HostAgentContext.chunkBytesFor(auto, 5, 4)).isEqualTo(HostAgentContext.CHUNK_BYTES_DEFAULT);
        assertThat(HostAgentContext.chunkBytesFor(auto, 64, 8)).isEqualTo(HostAgentContext.CHUNK_BYTES_DEFAULT);
    }

    @Test
    void shouldKeepAChunkSizeThatWasSetWhateverTheCores()
    {
        assertThat(HostAgentContext.chunkBytesFor(4096, 2, 4)).isEqualTo(4096);
        assertThat(HostAgentContext.chunkBytesFor(0, 64, 2)).isZero();
        final HostAgentContext set = new HostAgentContext().directory(dir).chunkBytes(8192).conclude();
        assertThat(set.chunkBytes()).isEqualTo(8192);
        assertThat(set.chunkBytesFor(Runtime.getRuntime().availableProcessors() + 1)).isEqualTo(8192);
    }

    @Test
    void shouldLeaveTheDefaultToEachJobAndRefuseOtherNegativeSizes()
    {
        final HostAgentContext unset = new HostAgentContext().directory(dir).conclude();
        assertThat(unset.chunkBytes()).isEqualTo(HostAgentContext.CHUNK_BYTES_AUTO);
        assertThat(unset.chunkBytesFor(Runtime.getRuntime().availableProcessors())).isZero();
        assertThatThrownBy(() -> new HostAgentContext().directory(dir).chunkBytes(-2).conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chunk bytes -2");
        assertThatThrownBy(() -> new HostAgentContext().directory(dir).chunkBytes(1000).conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chunk bytes 1000");
    }
}
