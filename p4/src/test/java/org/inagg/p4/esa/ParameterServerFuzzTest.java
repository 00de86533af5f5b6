package org.inagg.p4.esa;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes the parameter server's ingress: junk from any peer (the switch, workers, strangers) into the server while a
 * block of job 1 flows through the ESA switch in front of it. Harness and invariants: {@link EsaFuzzHarness}.
 */
class ParameterServerFuzzTest
{
    @FuzzTest(maxDuration = "10s")
    void shouldCountJunkAndKeepTheBlockExact(final byte[] data)
    {
        new EsaFuzzHarness(data, true).run();
    }
}
