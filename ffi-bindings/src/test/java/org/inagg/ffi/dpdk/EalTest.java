package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class EalTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void shouldReportEalErrorWithEalMessageOnBadArgumentAndRefuseSecondAttempt() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk();

        final DpdkTestEnvironment.ChildResult result = DpdkTestEnvironment.runJava(dir, EalInitFailureMain.class, 90);

        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output())
            .contains("EAL-EXCEPTION errno=22")
            .contains("rte_eal_init failed: Invalid argument (rte_errno 22)")
            .contains("--no-such-eal-option")
            // EAL's own words, captured from its log:
            .contains("Invalid 'command line' arguments")
            .contains("SECOND-INIT-REFUSED EAL failed to initialise in this process (inagg -l 0")
            .contains("DONE");
    }

    @Test
    void shouldShareOneEalAcrossTestClasses()
    {
        final Eal eal = DpdkTestEnvironment.eal();

        assertThat(Eal.current()).isSameAs(eal);
        assertThat(eal.lcoreCount()).isEqualTo(1);
        assertThat(EthPort.availableCount()).isGreaterThanOrEqualTo(2);
    }
}
