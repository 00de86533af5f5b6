package org.inagg.p4.bmv2;

import java.nio.file.Path;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What the bmv2 tests need: the P4 toolchain and the compiled program (from the cache; the first compile of a source
 * change takes ~95 s on a 2-core machine).
 *
 * <p>Without the toolchain the tests skip with the reason, unless {@code -Dinagg.bmv2.tests.require=true} (CI), where
 * they fail.
 */
final class Bmv2TestEnvironment
{
    static final String REQUIRE_PROPERTY = "inagg.bmv2.tests.require";

    private static Path json;

    private Bmv2TestEnvironment()
    {
    }

    /** The toolchain; skips (or, when required, fails) the calling test or class without it. */
    static P4Toolchain assumeToolchain()
    {
        final String reason = P4Toolchain.unavailableReason();
        if (reason != null)
        {
            if (Boolean.getBoolean(REQUIRE_PROPERTY))
            {
                Assertions.fail("bmv2 is required here (-D" + REQUIRE_PROPERTY + "=true) but " + reason);
            }
            System.err.println("[inagg-p4] skipping a bmv2 test: " + reason);
            Assumptions.abort("P4 toolchain not available: " + reason);
        }
        return P4Toolchain.locate();
    }

    /** The compiled inagg_v1model.json, compiled once per source change into the cache. */
    static synchronized Path v1modelJson()
    {
        final P4Toolchain toolchain = assumeToolchain();
        if (json == null)
        {
            json = Bmv2Program.v1modelJson(toolchain, Bmv2Program.cacheFolder());
        }
        return json;
    }
}
