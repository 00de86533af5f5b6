package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EalConfigTest
{
    @Test
    void shouldBuildEalCommandLineInOrder()
    {
        final EalConfig config = new EalConfig()
            .lcores("0-1").noHuge(true).noPci(true).filePrefix("p1").vdev("net_ring0").vdev("net_null0")
            .logLevel("notice").args("--in-memory");

        assertThat(config.toArguments()).containsExactly(
            "inagg", "-l", "0-1", "--no-huge", "-m", "512", "--no-pci", "--file-prefix", "p1",
            "--log-level", "notice", "--vdev", "net_ring0", "--vdev", "net_null0", "--in-memory");
    }

    @Test
    void shouldDefaultLcoreAndFilePrefixPerProcess()
    {
        final EalConfig config = new EalConfig().conclude();

        assertThat(config.filePrefix()).isEqualTo("inagg-" + ProcessHandle.current().pid());
        assertThat(config.toArguments()).containsSubsequence("-l", "0").doesNotContain("--no-huge", "-m");
    }

    @Test
    void shouldRejectBadSettingsNamingThem()
    {
        assertThatThrownBy(() -> new EalConfig().filePrefix("a b").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("filePrefix");
        assertThatThrownBy(() -> new EalConfig().lcores("zero").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lcores");
        assertThatThrownBy(() -> new EalConfig().vdev("net_ring0 x").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vdev");
        assertThatThrownBy(() -> new EalConfig().memoryMb(-1).conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("memoryMb");
        assertThatThrownBy(() -> new EalConfig().noPci(true).pciDevice("0000:3b:00.0").conclude())
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("noPci");
    }
}
