package org.inagg.services.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import org.inagg.services.http.HttpServers;
import org.inagg.services.http.IdleConnections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Numeric options out of range are refused naming the option, never ignored nor overflowing; the metrics port listens
 * on this host only by default and survives idle connections (issue 24).
 */
class CliRangeSecurityTest
{
    @TempDir
    Path dir;

    /** Runs {@code inagg ARGS...} in this JVM; returns the exit code and what it wrote to stderr. */
    private static String run(final Object command, final String... args)
    {
        final StringWriter err = new StringWriter();
        final CommandLine line = new CommandLine(command);
        line.setErr(new PrintWriter(err));
        line.setOut(new PrintWriter(new StringWriter()));
        line.setExecutionExceptionHandler((ex, cmd, parsed) ->
        {
            cmd.getErr().println("inagg: " + ex.getMessage());
            return 2;
        });
        final int code = line.execute(args);
        assertThat(code).as(err.toString()).isNotZero();
        return err.toString();
    }

    @Test
    void shouldRefuseANegativeElementCountNamingTheOption()
    {
        assertThat(run(new WorkerCommand(), "-n", "-1", "--switch", "127.0.0.1:9", "--worker-id", "0", "-w", "1"))
            .contains("-n/--elements must be in 1..").contains("got -1");
    }

    @Test
    void shouldRefuseNegativeLossDurationAndTimeoutsNamingTheOption()
    {
        assertThat(run(new WorkerCommand(), "--loss", "-0.1", "--switch", "127.0.0.1:9", "--worker-id", "0", "-w",
            "1")).contains("--loss must be in [0, 1/3]").contains("got -0.1");
        assertThat(run(new SwitchCommand(), "--duration", "-5", "--job", "1:1", "--open"))
            .contains("--duration must be at least 0, got -5");
        assertThat(run(new AgentCommand(), "--collective-timeout-ms", "-1"))
            .contains("--collective-timeout-ms must be at least 0, got -1");
        assertThat(run(new ControllerCommand(), "--duration", "-1", "--switch-control", "http://127.0.0.1:9",
            "--journal", dir.resolve("j").toString())).contains("--duration must be at least 0, got -1");
    }

    @Test
    void shouldExplainTheLossLimitInTermsOfTheOption()
    {
        assertThat(run(new WorkerCommand(), "--loss", "0.5", "--switch", "127.0.0.1:9", "--worker-id", "0", "-w",
            "1")).contains("--loss must be in [0, 1/3]").contains("dropped, duplicated and reordered")
            .doesNotContain("drop rate");
        assertThat(run(new SwitchCommand(), "--loss", "0.4", "--job", "1:1", "--open"))
            .contains("--loss must be in [0, 1/3]");
    }

    @Test
    void shouldRefuseAnOverflowingEsaPool()
    {
        assertThat(run(new ControllerCommand(), "--esa-pool", "2147483647:1", "--switch-control",
            "http://127.0.0.1:9", "--journal", dir.resolve("j").toString()))
            .contains("--esa-pool: BASE must be in 0..1023, got 2147483647");
        assertThat(run(new ControllerCommand(), "--esa-pool", "1000:100", "--switch-control",
            "http://127.0.0.1:9", "--journal", dir.resolve("j").toString()))
            .contains("--esa-pool: SLOTS must be in 1..24, got 100");
    }

    @Test
    @Timeout(60)
    void shouldServeMetricsOnLoopbackByDefaultAndAnswerWhileIdleConnectionsHoldItsThread() throws Exception
    {
        final CountersOptions options = new CountersOptions();
        options.directory = dir.toString();
        options.metricsPort = freePort();
        options.metricsBind = "127.0.0.1";
        assertThat(CountersOptions.class.getDeclaredField("metricsBind")
            .getAnnotation(picocli.CommandLine.Option.class).defaultValue()).isEqualTo("127.0.0.1");
        options.open("worker", "test", 16, new PrintWriter(new StringWriter()));
        try (IdleConnections idle = new IdleConnections(new InetSocketAddress("127.0.0.1", options.metricsPort), 3);
            HttpClient client = HttpClient.newHttpClient())
        {
            final HttpResponse<String> answer = IdleConnections.retryWithin(Duration.ofSeconds(20), () -> client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + options.metricsPort + "/metrics"))
                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
            assertThat(answer.statusCode()).isEqualTo(200);
        }
        finally
        {
            options.close();
        }
        assertThat(HttpServers.MAX_REQUEST_SECONDS_DEFAULT).isPositive();
    }

    private static int freePort() throws java.io.IOException
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    @Test
    @Timeout(60)
    void shouldRefuseATensorLargerThanTheHeapBeforeAllocatingNamingTheBytesAndTheHeap()
    {
        final long heap = Runtime.getRuntime().maxMemory();
        final long elements = Math.min(Integer.MAX_VALUE - 8, heap / Float.BYTES); // one tensor is the whole heap
        assertThat(run(new WorkerCommand(), "-n", Long.toString(elements), "--switch", "127.0.0.1:9", "--worker-id",
            "0", "-w", "1")).contains("-n/--elements").contains("a tensor of " + String.format("%,d", elements)
            + " elements needs " + String.format("%,d", elements * Float.BYTES) + " bytes")
            .contains("the heap has " + String.format("%,d", heap) + " bytes").contains("INAGG_JAVA_OPTS=-Xmx");
    }

    @Test
    @Timeout(60)
    void shouldCheckTheOptionsOfAControlledDpdkSwitchBeforeDpdkStarts()
    {
        // --control runs over DPDK too now (issue 24); what is wrong with its options is still said before EAL runs,
        // given EAL arguments that DPDK itself would refuse.
        assertThat(run(new SwitchCommand(), "--transport", "dpdk", "--control", "127.0.0.1:0", "--eal-args",
            "--no-such-eal-flag", "--port", "net_null0"))
            .contains("--transport dpdk needs --port, --local-mac and --local-ip").doesNotContain("EAL");
        assertThat(run(new SwitchCommand(), "--transport", "dpdk", "--control", "no-port-here", "--eal-args",
            "--no-such-eal-flag", "--port", "net_null0", "--local-mac", "02:00:00:00:00:01", "--local-ip", "10.0.0.1"))
            .contains("--control").doesNotContain("EAL");
    }
}
