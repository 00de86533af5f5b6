package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.inagg.p4.bmv2.Bmv2Program;
import org.inagg.p4.bmv2.Bmv2Switch;
import org.inagg.p4.bmv2.P4Toolchain;
import org.inagg.p4.bmv2.SimpleSwitchProcess;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller programming bmv2 (simple_switch with inagg_v1model.p4) through {@link Bmv2Backend}: a job's rows with
 * its ranks' sources, a restarted rank's new session, the job's removal. Skipped where the P4 tools are missing.
 */
@Timeout(300)
class Bmv2BackendTest
{
    /** True in CI: without the P4 tools the test fails instead of skipping. */
    private static final String REQUIRE_PROPERTY = "inagg.bmv2.tests.require";
    private static final String JOB_TABLE = "InaggIngress.job_table";
    private static final String WORKER_SOURCE = "InaggIngress.worker_source";
    private static final String JOIN_CREDENTIAL = "InaggIngress.join_credential";
    private static SimpleSwitchProcess simpleSwitch;
    private static Bmv2Backend backend;

    @TempDir
    Path dir;

    @BeforeAll
    static void startSwitch() throws Exception
    {
        final String reason = P4Toolchain.unavailableReason();
        if (reason != null)
        {
            if (Boolean.getBoolean(REQUIRE_PROPERTY))
            {
                Assertions.fail("bmv2 is required here (-D" + REQUIRE_PROPERTY + "=true) but " + reason);
            }
            System.err.println("[inagg-services] skipping the bmv2 backend test: " + reason);
            Assumptions.abort("P4 toolchain not available: " + reason);
        }
        final P4Toolchain toolchain = P4Toolchain.locate();
        simpleSwitch = SimpleSwitchProcess.start(new SimpleSwitchProcess.Context().toolchain(toolchain)
            .json(Bmv2Program.v1modelJson(toolchain, Bmv2Program.cacheFolder())));
        final Bmv2Switch bmv2 = new Bmv2Switch(simpleSwitch.cli(), new SwitchAddress(0x0200_0000_00feL, 0x0a00_00fe));
        backend = new Bmv2Backend(bmv2, new InetSocketAddress("10.0.0.254", 9000), Map.of(
            InetAddress.getByName("10.0.0.1"), new Bmv2Backend.Host(1, 0x0200_0000_0001L),
            InetAddress.getByName("10.0.0.2"), new Bmv2Backend.Host(2, 0x0200_0000_0002L)));
    }

    @AfterAll
    static void stopSwitch()
    {
        if (simpleSwitch != null)
        {
            simpleSwitch.close();
        }
    }

    private static RegisterRequest rank(final int rank, final String host, final int port)
    {
        return new RegisterRequest("bmv2-job", rank, 2, "int32", 4096, new InetSocketAddress(host, port), 8, null);
    }

    @Test
    void shouldInstallTheJobWithItsSourcesStartANewSessionOnARestartAndRemoveIt()
    {
        final int jobsBefore = simpleSwitch.cli().tableNumEntries(JOB_TABLE);
        final int sourcesBefore = simpleSwitch.cli().tableNumEntries(WORKER_SOURCE);
        final int credentialsBefore = simpleSwitch.cli().tableNumEntries(JOIN_CREDENTIAL);
        final JobRegistry registry = new JobRegistry(backend, Journal.open(dir.resolve("journal")),
            new SlotAllocator(256), new AtomicLong()::get, 5000, 64, 8, false);
        registry.recover();
        registry.register(rank(0, "10.0.0.1", 40000));
        final JsonHttp.Answer ready = registry.register(rank(1, "10.0.0.2", 40001));
        assertThat(ready.status()).isEqualTo(200);
        final int jobId = ready.body().path("jobId").asInt();
        assertThat(simpleSwitch.cli().tableNumEntries(JOB_TABLE)).isEqualTo(jobsBefore + 1);
        assertThat(simpleSwitch.cli().tableNumEntries(WORKER_SOURCE)).isEqualTo(sourcesBefore + 2);
        assertThat(simpleSwitch.cli().tableNumEntries(JOIN_CREDENTIAL)).as("a JOIN credential row per rank")
            .isEqualTo(credentialsBefore + 2);
        assertThat(ready.body().path("joinCredential").asText()).matches("[0-9a-f]{16}");
        final JobProgram installed = backend.installed().get(jobId);
        assertThat(installed.sources()).containsExactly(new InetSocketAddress("10.0.0.1", 40000),
            new InetSocketAddress("10.0.0.2", 40001));
        assertThat(installed.session()).isEqualTo(ready.body().path("session").asInt());

        registry.register(rank(1, "10.0.0.2", 40011)); // rank 1 restarted
        final JobProgram restarted = backend.installed().get(jobId);
        assertThat(restarted.session()).isNotEqualTo(installed.session());
        assertThat(restarted.sources()).containsExactly(new InetSocketAddress("10.0.0.1", 40000),
            new InetSocketAddress("10.0.0.2", 40011));

        final JsonHttp.Answer stranger = registry.register(new RegisterRequest("stranger", 0, 1, "int32", 10,
            new InetSocketAddress("10.9.9.9", 1), 0, null));
        assertThat(stranger.status()).as("not started").isEqualTo(202);
        assertThat(stranger.body().path("switchError").asText()).contains("10.9.9.9 is not attached");
        registry.free("stranger", Caller.embedded());
        registry.free("bmv2-job", Caller.embedded());
        assertThat(backend.installed()).doesNotContainKey(jobId);
        assertThat(simpleSwitch.cli().tableNumEntries(JOB_TABLE)).isEqualTo(jobsBefore);
        assertThat(simpleSwitch.cli().tableNumEntries(JOIN_CREDENTIAL)).as("removed with the job")
            .isEqualTo(credentialsBefore);
        registry.close();
    }
}
