package org.inagg.perf;

import org.inagg.ffi.dpdk.NativeLibraryLoader;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/** What the perf module's DPDK tests share: skip without DPDK, unless CI requires it. */
public final class DpdkTests
{
    private DpdkTests()
    {
    }

    /**
     * Skips the calling test when the shim or DPDK cannot be loaded, saying why; fails instead with
     * {@code -Dinagg.dpdk.tests.require=true} (CI).
     */
    public static void assumeDpdk()
    {
        final String reason = NativeLibraryLoader.unavailableReason();
        if (reason != null)
        {
            if (Boolean.getBoolean("inagg.dpdk.tests.require"))
            {
                Assertions.fail("DPDK is required here (-Dinagg.dpdk.tests.require=true) but " + reason);
            }
            Assumptions.abort("DPDK not available: " + reason);
        }
    }
}
