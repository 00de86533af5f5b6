package org.inagg.p4.esa;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes the ESA switch's ingress: junk from any peer (workers, the server, strangers) into the switch, interleaved
 * with a block of job 1, with the parameter server behind it. Harness and invariants: {@link EsaFuzzHarness}.
 */
class EsaSwitchFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldCountJunkAndKeepTheBlockExact(final byte[] data)
    {
        new EsaFuzzHarness(data, false).run();
    }
}
